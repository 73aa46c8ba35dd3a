/**
 * Notifications through the gateway: POST /v1/notifications, GET /v1/users/<ID>/notifications and DELETE /v1/notifications/<ID>, pagination and tenant
 * isolation.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApplication, request, uniqueId, type ApiClient, type TestApplication } from '../support/client.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let appA: TestApplication;
let appB: TestApplication;
let api: ApiClient;

const NOTIFICATION_ID = /^cord:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const listPath = (userId: string, query = '') => `/v1/users/${encodeURIComponent(userId)}/notifications${query}`;
const deletePath = (notificationId: string) => `/v1/notifications/${encodeURIComponent(notificationId)}`;

async function createUser(client: ApiClient, id: string, body: Record<string, unknown> = { name: id }) {
  const response = await client.put(`/v1/users/${encodeURIComponent(id)}`, body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return id;
}

/** Two fresh users of application A: Alice (the actor) and Bob (the recipient). */
async function pair(client: ApiClient = api) {
  const actor = await createUser(client, uniqueId('actor'), { name: 'Alice Actor' });
  const recipient = await createUser(client, uniqueId('recipient'), { name: 'Bob Recipient' });
  return { actor, recipient };
}

function payload(actor: string, recipient: string, extra: Record<string, unknown> = {}) {
  return {
    actor_id: actor,
    recipient_id: recipient,
    template: '{{actor}} mentioned you',
    url: 'https://example.com/page',
    type: 'url',
    ...extra,
  };
}

async function send(client: ApiClient, body: Record<string, unknown>): Promise<string> {
  const response = await client.post('/v1/notifications', body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body).toEqual({ success: true, message: 'Notification created.', notificationID: expect.any(String) });
  expect(response.body.notificationID).toMatch(NOTIFICATION_ID);
  return response.body.notificationID;
}

async function list(client: ApiClient, userId: string, query = '') {
  const response = await client.get(listPath(userId, query));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as { notifications: any[]; pagination: { token: string | null; total: number } };
}

/** Every notification of a user, page by page, checking each page's shape. */
async function listAll(client: ApiClient, userId: string, limit: number) {
  const seen: any[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const query: string = `?limit=${limit}${token ? `&token=${encodeURIComponent(token)}` : ''}`;
    const page = await list(client, userId, query);
    expect(page.notifications.length).toBeLessThanOrEqual(limit);
    seen.push(...page.notifications);
    token = page.pagination.token;
    pages += 1;
    expect(pages).toBeLessThan(100);
  } while (token !== null);
  return { seen, pages };
}

async function storedRows(applicationId: string, where: { recipientId?: string; actorId?: string }) {
  const { rows } = await system.sql.query(
    `SELECT external_id, recipient_id, actor_id, template, url, icon_url, extra_classnames, metadata, read_status, created_at
     FROM notification.notifications
     WHERE application_id = $1 AND ($2::text IS NULL OR recipient_id = $2) AND ($3::text IS NULL OR actor_id = $3)
     ORDER BY internal_id`,
    [applicationId, where.recipientId ?? null, where.actorId ?? null],
  );
  return rows;
}

async function countAll(): Promise<number> {
  const { rows } = await system.sql.query('SELECT count(*)::int AS count FROM notification.notifications');
  return rows[0].count;
}

/** Sends a request that must fail, and checks that nothing at all was stored. */
async function expectRejected(body: unknown, status: number, error: string, message?: RegExp | string) {
  const before = await countAll();
  const response = await api.post('/v1/notifications', body);
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body.error).toBe(error);
  expect(typeof response.body.message).toBe('string');
  if (message !== undefined) expect(response.body.message).toMatch(message);
  expect(await countAll()).toBe(before);
  return response.body;
}

systemForFile(async (started) => {
  system = started;
  appA = await createApplication(system, 'notifications A');
  appB = await createApplication(system, 'notifications B');
  api = appA.client;
});

describe('POST /v1/notifications', () => {
  it('creates a notification and stores it for the recipient, unread', async () => {
    const { actor, recipient } = await pair();
    const id = await send(api, payload(actor, recipient));
    const rows = await storedRows(appA.id, { recipientId: recipient });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      external_id: id,
      recipient_id: recipient,
      actor_id: actor,
      template: '{{actor}} mentioned you',
      url: 'https://example.com/page',
      icon_url: null,
      extra_classnames: null,
      metadata: {},
      read_status: 'unread',
    });
  });

  it('gives every notification its own id', async () => {
    const { actor, recipient } = await pair();
    const first = await send(api, payload(actor, recipient));
    const second = await send(api, payload(actor, recipient));
    expect(first).not.toBe(second);
    expect((await storedRows(appA.id, { recipientId: recipient })).map((row) => row.external_id)).toEqual([first, second]);
  });

  it('accepts the camelCase aliases actorID and recipientID', async () => {
    const { actor, recipient } = await pair();
    const { actor_id: _a, recipient_id: _r, ...rest } = payload(actor, recipient);
    const id = await send(api, { ...rest, actorID: actor, recipientID: recipient });
    const rows = await storedRows(appA.id, { recipientId: recipient });
    expect(rows.map((row) => [row.external_id, row.actor_id, row.recipient_id])).toEqual([[id, actor, recipient]]);
  });

  it('uses the camelCase alias when both spellings are sent', async () => {
    const { actor, recipient } = await pair();
    await send(api, payload(uniqueId('ignored'), uniqueId('ignored'), { actorID: actor, recipientID: recipient }));
    expect((await storedRows(appA.id, { recipientId: recipient })).map((row) => row.actor_id)).toEqual([actor]);
  });

  it('accepts users whose status is deleted', async () => {
    const { actor, recipient } = await pair();
    await createUser(api, actor, { status: 'deleted' });
    await createUser(api, recipient, { status: 'deleted' });
    const id = await send(api, payload(actor, recipient));
    expect((await list(api, recipient)).notifications.map((item) => item.id)).toEqual([id]);
  });

  it('accepts and stores the optional iconUrl, metadata and extraClassnames', async () => {
    const { actor, recipient } = await pair();
    const id = await send(
      api,
      payload(actor, recipient, {
        iconUrl: 'https://example.com/icon.png',
        metadata: { kind: 'mention', count: 3, urgent: true },
        extraClassnames: 'loud blue',
      }),
    );
    const [row] = await storedRows(appA.id, { recipientId: recipient });
    expect(row).toMatchObject({
      external_id: id,
      icon_url: 'https://example.com/icon.png',
      metadata: { kind: 'mention', count: 3, urgent: true },
      extra_classnames: 'loud blue',
    });
  });

  it('accepts identifiers with spaces, slashes, @ and emoji for actor and recipient', async () => {
    const actor = await createUser(api, `${uniqueId('a')} ünï/côdé@x 😀`, { name: 'Ünïcode' });
    const recipient = await createUser(api, `${uniqueId('r')}/{"json": true} 100%`, { name: 'Jason' });
    const id = await send(api, payload(actor, recipient));
    const page = await list(api, recipient);
    expect(page.notifications.map((item) => [item.id, item.senderUserIDs])).toEqual([[id, [actor]]]);
  });

  it('accepts placeholders with spaces inside the braces', async () => {
    const { actor, recipient } = await pair();
    await send(api, payload(actor, recipient, { template: '{{ actor }} and {{   recipient}}' }));
    expect(await storedRows(appA.id, { recipientId: recipient })).toHaveLength(1);
  });

  it('accepts any URI that passes the URL rule, including percent-encoded and non-http ones', async () => {
    const { actor, recipient } = await pair();
    for (const url of ['https://example.com/a%20b?x=1#frag', 'mailto:someone@example.com', 'ftp://files.example.com/x']) {
      await send(api, payload(actor, recipient, { url }));
    }
    expect((await storedRows(appA.id, { recipientId: recipient })).map((row) => row.url)).toEqual([
      'https://example.com/a%20b?x=1#frag',
      'mailto:someone@example.com',
      'ftp://files.example.com/x',
    ]);
  });

  describe('missing fields', () => {
    for (const field of ['actor_id', 'recipient_id', 'template', 'url', 'type'] as const) {
      it(`rejects a request without ${field} with 400 missing_field naming it`, async () => {
        const { actor, recipient } = await pair();
        const body: Record<string, unknown> = payload(actor, recipient);
        delete body[field];
        await expectRejected(body, 400, 'missing_field', new RegExp(`\\b${field}\\b`));
      });
    }

    it('names both actor_id and recipient_id when both are absent', async () => {
      const body = await expectRejected(
        { template: '{{actor}} hi', url: 'https://example.com', type: 'url' },
        400,
        'missing_field',
      );
      expect(body.message).toMatch(/actor_id/);
      expect(body.message).toMatch(/recipient_id/);
    });

    it('reports a missing actor or recipient together with the other missing fields', async () => {
      const body = await expectRejected({ recipient_id: 'someone', url: 'https://example.com', type: 'url' }, 400, 'missing_field');
      expect(body.message).toBe('Missing required fields: actor_id and template.');
      const both = await expectRejected({ template: '{{actor}}', type: 'url' }, 400, 'missing_field');
      expect(both.message).toBe('Missing required fields: actor_id, recipient_id and url.');
      const all = await expectRejected({}, 400, 'missing_field');
      expect(all.message).toBe('Missing required fields: actor_id, recipient_id, template, url and type.');
    });

    it('reports a missing actor or recipient before any invalid or unexpected field', async () => {
      const { actor, recipient } = await pair();
      const noActor: Record<string, unknown> = payload(actor, recipient, { url: 'not a url', type: 'email' });
      delete noActor.actor_id;
      await expectRejected(noActor, 400, 'missing_field', /actor_id/);
      const noRecipient: Record<string, unknown> = payload(actor, recipient, { template: 'no placeholder', colour: 'red' });
      delete noRecipient.recipient_id;
      await expectRejected(noRecipient, 400, 'missing_field', /recipient_id/);
    });

    it('answers missing_field for {} and invalid_request for an empty or non-object body', async () => {
      await expectRejected({}, 400, 'missing_field');
      const before = await countAll();
      for (const rawBody of ['', '   ', '[]', 'null', '"text"', '{not json']) {
        const response = await request(system.url, 'POST', '/v1/notifications', {
          token: await serverToken(appA.id, appA.secret),
          rawBody,
          headers: { 'content-type': 'application/json' },
        });
        expect(response.status, `${rawBody}: ${JSON.stringify(response.body)}`).toBe(400);
        expect(response.body.error, rawBody).toBe('invalid_request');
      }
      expect(await countAll()).toBe(before);
    });
  });

  describe('invalid fields', () => {
    it('rejects a type other than url with 400 invalid_field', async () => {
      const { actor, recipient } = await pair();
      for (const type of ['email', 'URL', '', 1, null]) {
        await expectRejected(payload(actor, recipient, { type }), 400, 'invalid_field', /type/);
      }
    });

    it('rejects a template without {{actor}} with 400 invalid_field', async () => {
      const { actor, recipient } = await pair();
      for (const template of ['hello', '', '{{recipient}} was pinged', '{{ actors }} hi', '{actor} hi', '{{act or}}', '{{Actor}} hi']) {
        await expectRejected(payload(actor, recipient, { template }), 400, 'invalid_field');
      }
      await expectRejected(payload(actor, recipient, { template: 42 }), 400, 'invalid_field', /template/);
    });

    it('checks the template in its place among the received keys', async () => {
      const { actor, recipient } = await pair();
      const first = await expectRejected(payload(actor, recipient, { template: 'no placeholder', colour: 'red' }), 400, 'invalid_field');
      expect(first.message).toMatch(/template|\{\{actor\}\}/);
      const { template: _t, ...rest } = payload(actor, recipient);
      await expectRejected({ colour: 'red', template: 'no placeholder', ...rest }, 400, 'unexpected_field', /colour/);
    });

    it('rejects a url that is not a valid URI with 400 invalid_field', async () => {
      const { actor, recipient } = await pair();
      for (const url of ['not a url', 'example.com/page', '/relative/path', 'https://example.com/a b', 'https://example.com/ü', 'https://example.com/{x}', '', 7]) {
        await expectRejected(payload(actor, recipient, { url }), 400, 'invalid_field', /url/);
      }
    });

    it('rejects actor and recipient ids that are not identifiers with 400 invalid_field', async () => {
      const { actor, recipient } = await pair();
      const bad = ['', 'cord:someone', 'tab\there', 'x'.repeat(321), 12, null];
      for (const value of bad) {
        await expectRejected(payload(actor, recipient, { actor_id: value }), 400, 'invalid_field', /actor/);
        await expectRejected(payload(actor, recipient, { recipient_id: value }), 400, 'invalid_field', /recipient/);
      }
      const { actor_id: _a, recipient_id: _r, ...rest } = payload(actor, recipient);
      await expectRejected({ ...rest, actorID: 'cord:x', recipientID: recipient }, 400, 'invalid_field', /actor/);
      await expectRejected({ ...rest, actorID: actor, recipientID: 'cord:x' }, 400, 'invalid_field', /recipient/);
    });

    it('rejects metadata that is not a flat object, and a bad iconUrl, with 400 invalid_field', async () => {
      const { actor, recipient } = await pair();
      for (const metadata of [{ nested: {} }, { list: [1] }, { empty: null }, [], 'text']) {
        await expectRejected(payload(actor, recipient, { metadata }), 400, 'invalid_field', /metadata/);
      }
      await expectRejected(payload(actor, recipient, { iconUrl: 'not a url' }), 400, 'invalid_field', /iconUrl/);
      await expectRejected(payload(actor, recipient, { extraClassnames: 5 }), 400, 'invalid_field', /extraClassnames/);
    });

    it('rejects an unknown field with 400 unexpected_field naming it', async () => {
      const { actor, recipient } = await pair();
      await expectRejected(payload(actor, recipient, { colour: 'red' }), 400, 'unexpected_field', /colour/);
    });
  });

  describe('unknown users', () => {
    it('answers 401 user_not_found for an unknown actor and stores nothing', async () => {
      const { recipient } = await pair();
      const ghost = uniqueId('ghost');
      const body = await expectRejected(payload(ghost, recipient), 401, 'user_not_found');
      expect(body.message).toContain(ghost);
      const { actor_id: _a, ...rest } = payload(ghost, recipient);
      await expectRejected({ ...rest, actorID: ghost }, 401, 'user_not_found', ghost);
    });

    it('answers 401 user_not_found for an unknown recipient and stores nothing', async () => {
      const { actor } = await pair();
      const ghost = uniqueId('ghost');
      const body = await expectRejected(payload(actor, ghost), 401, 'user_not_found');
      expect(body.message).toContain(ghost);
      const { recipient_id: _r, ...rest } = payload(actor, ghost);
      await expectRejected({ ...rest, recipientID: ghost }, 401, 'user_not_found', ghost);
    });

    it("answers 401 user_not_found when the actor or recipient is another application's user", async () => {
      const { actor, recipient } = await pair();
      const foreign = await createUser(appB.client, uniqueId('foreign'), { name: 'Foreign' });
      await expectRejected(payload(foreign, recipient), 401, 'user_not_found', foreign);
      await expectRejected(payload(actor, foreign), 401, 'user_not_found', foreign);
      expect(await storedRows(appB.id, {})).toEqual([]);
    });
  });
});

describe('GET /v1/users/<ID>/notifications', () => {
  it('lists a notification as the recipient sees it', async () => {
    const { actor, recipient } = await pair();
    const id = await send(
      api,
      payload(actor, recipient, {
        template: '{{actor}} mentioned you',
        url: 'https://example.com/thread?x=1',
        iconUrl: 'https://example.com/icon.png',
        metadata: { kind: 'mention' },
        extraClassnames: 'loud',
      }),
    );
    const [row] = await storedRows(appA.id, { recipientId: recipient });
    const page = await list(api, recipient);
    expect(page.pagination).toEqual({ token: null, total: 1 });
    expect(page.notifications).toHaveLength(1);
    const [item] = page.notifications;
    expect(item).toEqual({
      id,
      senderUserIDs: [actor],
      iconUrl: 'https://example.com/icon.png',
      header: [
        { type: 'user', userID: actor, user: expect.objectContaining({ id: actor, name: 'Alice Actor' }) },
        { type: 'text', text: ' mentioned you', bold: false },
      ],
      headerTranslation: null,
      attachment: { type: 'url', url: 'https://example.com/thread?x=1' },
      readStatus: 'unread',
      timestamp: new Date(row.created_at).toISOString(),
      extraClassnames: 'loud',
      metadata: { kind: 'mention' },
      text: 'Alice Actor mentioned you',
    });
    expect(item.timestamp).toMatch(ISO_MS);
  });

  it('defaults iconUrl and extraClassnames to null and metadata to {}', async () => {
    const { actor, recipient } = await pair();
    await send(api, payload(actor, recipient));
    const [item] = (await list(api, recipient)).notifications;
    expect(item.iconUrl).toBeNull();
    expect(item.extraClassnames).toBeNull();
    expect(item.metadata).toEqual({});
  });

  it('renders {{recipient}} and spaced placeholders with both names, in header and text', async () => {
    const { actor, recipient } = await pair();
    await send(
      api,
      payload(actor, recipient, { template: 'Hey {{ recipient }}, {{actor}} replied to {{recipient}} (by {{  actor  }})' }),
    );
    const [item] = (await list(api, recipient)).notifications;
    expect(item.text).toBe('Hey Bob Recipient, Alice Actor replied to Bob Recipient (by Alice Actor)');
    expect(item.header.map((part: any) => (part.type === 'text' ? ['text', part.text, part.bold] : ['user', part.userID]))).toEqual([
      ['text', 'Hey ', false],
      ['user', recipient],
      ['text', ', ', false],
      ['user', actor],
      ['text', ' replied to ', false],
      ['user', recipient],
      ['text', ' (by ', false],
      ['user', actor],
      ['text', ')', false],
    ]);
    expect(item.header[1].user).toMatchObject({ id: recipient, name: 'Bob Recipient' });
    expect(item.header[3].user).toMatchObject({ id: actor, name: 'Alice Actor' });
  });

  it('renders the names current at the time of listing', async () => {
    const { actor, recipient } = await pair();
    await send(api, payload(actor, recipient, { template: '{{actor}} → {{recipient}}' }));
    await createUser(api, actor, { name: 'Alice Renamed' });
    const [item] = (await list(api, recipient)).notifications;
    expect(item.text).toBe('Alice Renamed → Bob Recipient');
  });

  it('keeps text that looks like placeholders but is not one', async () => {
    const { actor, recipient } = await pair();
    await send(api, payload(actor, recipient, { template: '{{actor}} says {{other}} and {actor} and $& and $1' }));
    const [item] = (await list(api, recipient)).notifications;
    expect(item.text).toBe('Alice Actor says {{other}} and {actor} and $& and $1');
  });

  it('lists only the notifications received by the user, newest first', async () => {
    const { actor, recipient } = await pair();
    const other = await createUser(api, uniqueId('other'), { name: 'Other' });
    const ids: string[] = [];
    for (let index = 0; index < 4; index++) ids.push(await send(api, payload(actor, recipient, { template: `{{actor}} #${index}` })));
    await send(api, payload(recipient, other));
    await send(api, payload(actor, other));
    const page = await list(api, recipient);
    expect(page.notifications.map((item) => item.id)).toEqual([...ids].reverse());
    expect(page.notifications.map((item) => item.text)).toEqual(['#3', '#2', '#1', '#0'].map((n) => `Alice Actor ${n}`));
    expect(page.pagination).toEqual({ token: null, total: 4 });
    // The actor received nothing.
    expect(await list(api, actor)).toEqual({ notifications: [], pagination: { token: null, total: 0 } });
  });

  it('answers an empty list for a user without notifications', async () => {
    const lonely = await createUser(api, uniqueId('lonely'));
    expect(await list(api, lonely)).toEqual({ notifications: [], pagination: { token: null, total: 0 } });
  });

  it('answers 401 user_not_found for an unknown user', async () => {
    const response = await api.get(listPath(uniqueId('nobody')));
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('user_not_found');
  });

  it('answers 400 invalid_request for a path id that is not an identifier', async () => {
    const response = await api.get(listPath('cord:someone'));
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_request');
  });

  describe('pagination', () => {
    let recipient: string;
    let newestFirst: string[];

    beforeAll(async () => {
      const users = await pair();
      recipient = users.recipient;
      const ids: string[] = [];
      for (let index = 0; index < 7; index++) ids.push(await send(api, payload(users.actor, recipient, { template: `{{actor}} ${index}` })));
      newestFirst = [...ids].reverse();
    });

    it('returns every notification exactly once, in order, with the total on every page', async () => {
      for (const limit of [1, 2, 3, 6, 7, 8]) {
        const { seen, pages } = await listAll(api, recipient, limit);
        expect(seen.map((item) => item.id), `limit ${limit}`).toEqual(newestFirst);
        expect(pages, `limit ${limit}`).toBe(Math.max(1, Math.ceil(7 / limit)));
      }
      const first = await list(api, recipient, '?limit=3');
      expect(first.notifications.map((item) => item.id)).toEqual(newestFirst.slice(0, 3));
      expect(first.pagination.total).toBe(7);
      expect(typeof first.pagination.token).toBe('string');
      const second = await list(api, recipient, `?limit=3&token=${encodeURIComponent(first.pagination.token!)}`);
      expect(second.notifications.map((item) => item.id)).toEqual(newestFirst.slice(3, 6));
      expect(second.pagination.total).toBe(7);
    });

    it('accepts a token pasted unencoded into the query string', async () => {
      let token: string | null = null;
      const seen: string[] = [];
      do {
        const page = await list(api, recipient, `?limit=2${token ? `&token=${token}` : ''}`);
        seen.push(...page.notifications.map((item) => item.id));
        token = page.pagination.token;
      } while (token !== null);
      expect(seen).toEqual(newestFirst);
    });

    it('answers an empty page with the right total for limit=0, and clamps large limits', async () => {
      const empty = await list(api, recipient, '?limit=0');
      expect(empty.notifications).toEqual([]);
      expect(empty.pagination.total).toBe(7);
      const all = await list(api, recipient, '?limit=5000');
      expect(all.notifications.map((item) => item.id)).toEqual(newestFirst);
      expect(all.pagination).toEqual({ token: null, total: 7 });
      const defaulted = await list(api, recipient, '?limit=');
      expect(defaulted.notifications.map((item) => item.id)).toEqual(newestFirst);
    });

    it('rejects a bad limit with 400 invalid_field', async () => {
      for (const limit of ['abc', '-1', '1.5', '2x', '1&limit=2']) {
        const response = await api.get(listPath(recipient, `?limit=${limit}`));
        expect(response.status, limit).toBe(400);
        expect(response.body.error, limit).toBe('invalid_field');
      }
    });

    it('rejects a bad token with 400 invalid_field', async () => {
      const tokens = [
        'not-a-token',
        Buffer.from('{}').toString('base64'),
        Buffer.from('[1]').toString('base64'),
        Buffer.from(JSON.stringify({ externalID: 'cord:x' })).toString('base64'),
        Buffer.from(JSON.stringify({ externalID: 'cord:x', createdAtWithMicros: 'yesterday' })).toString('base64'),
        ...['2024-13-45 99:99:99.000000', '2023-02-29 00:00:00.000000', '2024-01-01 24:00:00', '0000-01-01 00:00:00', '2024-01-01 00:60:00'].map(
          (createdAtWithMicros) => Buffer.from(JSON.stringify({ externalID: 'cord:x', createdAtWithMicros })).toString('base64'),
        ),
        Buffer.from(JSON.stringify({ externalID: '', createdAtWithMicros: '2024-01-01 00:00:00.000000' })).toString('base64'),
      ];
      for (const token of tokens) {
        const response = await api.get(listPath(recipient, `?token=${encodeURIComponent(token)}`));
        expect(response.status, `${token}: ${JSON.stringify(response.body)}`).toBe(400);
        expect(response.body.error, token).toBe('invalid_field');
      }
      const repeated = await api.get(listPath(recipient, '?token=a&token=b'));
      expect(repeated.status).toBe(400);
      expect(repeated.body.error).toBe('invalid_field');
    });

    it('pages correctly through notifications that share one timestamp', async () => {
      const users = await pair();
      const ids: string[] = [];
      for (let index = 0; index < 5; index++) ids.push(await send(api, payload(users.actor, users.recipient)));
      // Several notifications created within the same microsecond (e.g. by concurrent requests).
      await system.sql.query(
        `UPDATE notification.notifications SET created_at = '2030-01-02T03:04:05.123456Z'
         WHERE application_id = $1 AND recipient_id = $2 AND external_id = ANY($3::text[])`,
        [appA.id, users.recipient, ids.slice(1, 4)],
      );
      const all = await list(api, users.recipient);
      expect(new Set(all.notifications.map((item) => item.id))).toEqual(new Set(ids));
      const order = all.notifications.map((item) => item.id);
      for (const limit of [1, 2, 3, 4]) {
        const { seen } = await listAll(api, users.recipient, limit);
        expect(seen.map((item) => item.id), `limit ${limit}`).toEqual(order);
      }
    });

    it('never shows a notification twice when new ones arrive between pages', async () => {
      const users = await pair();
      const before: string[] = [];
      for (let index = 0; index < 4; index++) before.push(await send(api, payload(users.actor, users.recipient)));
      const first = await list(api, users.recipient, '?limit=2');
      const added = await send(api, payload(users.actor, users.recipient));
      const seen = first.notifications.map((item) => item.id);
      let token = first.pagination.token;
      while (token !== null) {
        const page = await list(api, users.recipient, `?limit=2&token=${encodeURIComponent(token)}`);
        seen.push(...page.notifications.map((item) => item.id));
        token = page.pagination.token;
      }
      expect(seen).toEqual([...before].reverse());
      expect(seen).not.toContain(added);
    });
  });
});

describe('DELETE /v1/notifications/<ID>', () => {
  it('deletes a notification, which then disappears from the list and the store', async () => {
    const { actor, recipient } = await pair();
    const keep = await send(api, payload(actor, recipient));
    const gone = await send(api, payload(actor, recipient));
    const response = await api.delete(deletePath(gone));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ success: true, message: `You successfully deleted notification ${gone}` });
    const page = await list(api, recipient);
    expect(page.notifications.map((item) => item.id)).toEqual([keep]);
    expect(page.pagination.total).toBe(1);
    expect((await storedRows(appA.id, { recipientId: recipient })).map((row) => row.external_id)).toEqual([keep]);
  });

  it('accepts the id with an unencoded colon in the path', async () => {
    const { actor, recipient } = await pair();
    const id = await send(api, payload(actor, recipient));
    const response = await api.delete(`/v1/notifications/${id}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.message).toBe(`You successfully deleted notification ${id}`);
    expect(await storedRows(appA.id, { recipientId: recipient })).toEqual([]);
  });

  it('answers 404 not_found for a notification that is already deleted or never existed', async () => {
    const { actor, recipient } = await pair();
    const id = await send(api, payload(actor, recipient));
    expect((await api.delete(deletePath(id))).status).toBe(200);
    for (const missing of [id, `cord:${randomUUID()}`, `cord:${randomUUID().toUpperCase()}`, uniqueId('never')]) {
      const response = await api.delete(deletePath(missing));
      expect(response.status, missing).toBe(404);
      expect(response.body.error, missing).toBe('not_found');
    }
  });

  it('answers 400 invalid_field for an id that is neither an identifier nor cord:<uuid>', async () => {
    for (const bad of ['cord:not-a-uuid', 'cord:']) {
      const response = await api.delete(deletePath(bad));
      expect(response.status, bad).toBe(400);
      expect(response.body.error, bad).toBe('invalid_field');
    }
  });

  it('leaves the other notifications of the application alone', async () => {
    const { actor, recipient } = await pair();
    const ids = [await send(api, payload(actor, recipient)), await send(api, payload(recipient, actor))];
    const total = await countAll();
    expect((await api.delete(deletePath(ids[0]))).status).toBe(200);
    expect(await countAll()).toBe(total - 1);
    expect((await list(api, actor)).notifications.map((item) => item.id)).toEqual([ids[1]]);
  });
});

describe('tenant isolation', () => {
  it("does not let application B list A's user's notifications", async () => {
    const { actor, recipient } = await pair();
    const id = await send(api, payload(actor, recipient));
    const foreign = await appB.client.get(listPath(recipient));
    expect(foreign.status).toBe(401);
    expect(foreign.body.error).toBe('user_not_found');
    // B's own user with the same id has its own, empty, list.
    await createUser(appB.client, recipient, { name: 'B twin' });
    expect(await list(appB.client, recipient)).toEqual({ notifications: [], pagination: { token: null, total: 0 } });
    expect((await list(api, recipient)).notifications.map((item) => item.id)).toEqual([id]);
  });

  it("keeps same-id users of two applications apart in both directions", async () => {
    const actor = uniqueId('shared-actor');
    const recipient = uniqueId('shared-recipient');
    for (const client of [appA.client, appB.client]) {
      await createUser(client, actor, { name: client === appA.client ? 'A actor' : 'B actor' });
      await createUser(client, recipient, { name: client === appA.client ? 'A recipient' : 'B recipient' });
    }
    const inA = await send(appA.client, payload(actor, recipient, { template: '{{actor}} to {{recipient}}' }));
    const inB = await send(appB.client, payload(actor, recipient, { template: '{{actor}} to {{recipient}}' }));
    const listA = await list(appA.client, recipient);
    const listB = await list(appB.client, recipient);
    expect(listA.notifications.map((item) => [item.id, item.text])).toEqual([[inA, 'A actor to A recipient']]);
    expect(listB.notifications.map((item) => [item.id, item.text])).toEqual([[inB, 'B actor to B recipient']]);
    expect(listA.pagination.total).toBe(1);
    expect(listB.pagination.total).toBe(1);
  });

  it("does not let application B delete A's notification", async () => {
    const { actor, recipient } = await pair();
    const id = await send(api, payload(actor, recipient));
    const response = await appB.client.delete(deletePath(id));
    expect(response.status).toBe(404);
    expect(response.body.error).toBe('not_found');
    expect((await list(api, recipient)).notifications.map((item) => item.id)).toEqual([id]);
    expect(await storedRows(appA.id, { recipientId: recipient })).toHaveLength(1);
  });

  it('requires authorization on every notification endpoint', async () => {
    for (const [method, path] of [
      ['POST', '/v1/notifications'],
      ['GET', listPath('someone')],
      ['DELETE', deletePath(`cord:${randomUUID()}`)],
    ] as const) {
      const response = await request(system.url, method, path, { body: method === 'POST' ? {} : undefined });
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.body.error, `${method} ${path}`).toBe('missing_authorization_header');
    }
  });
});
