/**
 * Safe retries with `Idempotency-Key` (issue 18) on every write that takes one, through the
 * gateway: a repeat answers the first answer and writes nothing, a reused key with another body
 * or path is refused, keys of different applications (customers) are independent, an expired key
 * runs again, and a repeat while the first request still runs is told to come back.
 */
import http from 'node:http';
import { processMetrics } from '@collab/shared';
import { pruneExpiredIdempotencyKeys } from '@collab/shared/storage';
import { describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { asCustomer, createApplication, request, uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { seedTeam } from '../support/seed.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { createConversationDataSource } from '../../services/conversation/src/data-source.js';
import { customerToken, serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;
let other: TestApplication;

const THREAD = 'idempotency-thread';
const content = (text: string) => [{ type: 'p', children: [{ text }] }];
const message = (text: string) => ({ authorID: 'ann', content: content(text) });
const keyed = (key: string) => ({ 'Idempotency-Key': key });
const replayed = (response: ApiResponse) => response.headers.get('idempotent-replayed');

async function count(sql: string, parameters: unknown[]): Promise<number> {
  const { rows } = await system.sql.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${sql}`, parameters);
  return rows[0].count;
}
const messagesOf = (application: TestApplication) => count('conversation.messages WHERE application_id = $1', [application.id]);

async function replayCount(route: string): Promise<number> {
  const metric = await processMetrics().registry.getSingleMetric('idempotent_replays_total')?.get();
  return metric?.values.find((value) => value.labels.route === route)?.value ?? 0;
}

systemWithApplication('idempotency app', async (started) => {
  ({ system, app } = started);
  other = await createApplication(system, 'other idempotency app');
  for (const application of [app, other]) {
    await seedTeam(application);
    const first = await application.client.post(`/v1/threads/${THREAD}/messages`, {
      ...message('the thread'),
      createThread: { groupID: 'team', location: { page: 'idempotency' }, url: 'https://example.com/i', name: 'Idempotency' },
    });
    if (first.status !== 200) throw new Error(`thread setup failed: ${JSON.stringify(first.body)}`);
  }
}, { startTimeoutMs: 60_000 });

describe('POST /v1/threads/<ID>/messages with an Idempotency-Key', () => {
  const path = `/v1/threads/${THREAD}/messages`;

  it('answers a repeat with the first answer, marked replayed, and writes one message', async () => {
    const key = uniqueId('twice');
    const before = await messagesOf(app);
    const replaysBefore = await replayCount('/v1/threads/:threadID/messages');
    const first = await app.client.post(path, message('once'), keyed(key));
    const second = await app.client.post(path, message('once'), keyed(key));
    expect(first.status).toBe(200);
    expect(replayed(first)).toBeNull();
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(replayed(second)).toBe('true');
    expect(await messagesOf(app)).toBe(before + 1);
    expect(await replayCount('/v1/threads/:threadID/messages')).toBe(replaysBefore + 1);
  });

  it('runs parallel repeats once: one answer written, the others replayed or told the key is in use', async () => {
    const key = uniqueId('parallel');
    const before = await messagesOf(app);
    const answers = await Promise.all(Array.from({ length: 8 }, () => app.client.post(path, message('parallel'), keyed(key))));
    const fresh = answers.filter((answer) => answer.status === 200 && replayed(answer) === null);
    expect(fresh).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 409) {
        expect(answer.body.error).toBe('idempotency_key_in_use');
        expect(answer.headers.get('retry-after')).toBe('1');
      } else {
        expect(answer.status).toBe(200);
        expect(answer.body.messageID).toBe(fresh[0].body.messageID);
      }
    }
    expect(await messagesOf(app)).toBe(before + 1);
    const retry = await app.client.post(path, message('parallel'), keyed(key));
    expect(retry.body.messageID).toBe(fresh[0].body.messageID);
    expect(replayed(retry)).toBe('true');
  });

  it('refuses the same key with another body, or on another thread, with 422 idempotency_key_reused', async () => {
    const key = uniqueId('reused');
    const first = await app.client.post(path, message('first body'), keyed(key));
    expect(first.status).toBe(200);
    const before = await messagesOf(app);
    const otherBody = await app.client.post(path, message('another body'), keyed(key));
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.error).toBe('idempotency_key_reused');
    const otherThread = await app.client.post('/v1/threads/another-thread/messages', message('first body'), keyed(key));
    expect(otherThread.status).toBe(422);
    expect(otherThread.body.error).toBe('idempotency_key_reused');
    expect(await messagesOf(app)).toBe(before);
  });

  it('takes the same body with its keys in another order as the same request', async () => {
    const key = uniqueId('order');
    const first = await app.client.post(path, { authorID: 'ann', content: content('ordered') }, keyed(key));
    const second = await app.client.post(path, { content: content('ordered'), authorID: 'ann' }, keyed(key));
    expect(second.body).toEqual(first.body);
    expect(replayed(second)).toBe('true');
  });

  it("keeps each application's keys apart: the same key in another application writes its own message", async () => {
    const key = uniqueId('shared key');
    const mine = await app.client.post(path, message('same key'), keyed(key));
    const before = await messagesOf(other);
    const theirs = await other.client.post(path, message('same key'), keyed(key));
    expect(theirs.status).toBe(200);
    expect(replayed(theirs)).toBeNull();
    expect(theirs.body.messageID).not.toBe(mine.body.messageID);
    expect(await messagesOf(other)).toBe(before + 1);
  });

  it('runs a request again once its key has expired', async () => {
    const key = uniqueId('expired');
    const first = await app.client.post(path, message('expiring'), keyed(key));
    // The key's IDEMPOTENCY_TTL_HOURS have passed.
    await system.sql.query(`UPDATE conversation.idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
    const before = await messagesOf(app);
    const again = await app.client.post(path, message('expiring'), keyed(key));
    expect(again.status).toBe(200);
    expect(replayed(again)).toBeNull();
    expect(again.body.messageID).not.toBe(first.body.messageID);
    expect(await messagesOf(app)).toBe(before + 1);
  });

  it('stores a refusal (4xx): the repeat answers it again even once the request would pass', async () => {
    const key = uniqueId('refused');
    const refused = await app.client.post(path, { authorID: 'newcomer', content: content('too early') }, keyed(key));
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('user_not_found');
    await app.client.put('/v1/users/newcomer', { name: 'Newcomer' });
    await app.client.put('/v1/groups/team', { name: 'team', members: ['ann', 'bob', 'dora', 'newcomer'] });
    const repeat = await app.client.post(path, { authorID: 'newcomer', content: content('too early') }, keyed(key));
    expect(repeat.status).toBe(401);
    expect(repeat.body).toEqual(refused.body);
    expect(replayed(repeat)).toBe('true');
  });

  it('changes nothing without the header: every request writes', async () => {
    const before = await messagesOf(app);
    const first = await app.client.post(path, message('no key'));
    const second = await app.client.post(path, message('no key'));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.messageID).not.toBe(first.body.messageID);
    expect(replayed(second)).toBeNull();
    expect(await messagesOf(app)).toBe(before + 2);
  });

  it.each([
    ['empty', ''],
    ['longer than 255 characters', 'k'.repeat(256)],
    ['not printable ASCII', 'tab\there'],
  ])('refuses a key that is %s with 400 invalid_field naming the header', async (_case, key) => {
    const before = await messagesOf(app);
    const answer = await app.client.post(path, message('bad key'), keyed(key));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_field');
    expect(answer.body.message).toContain('Idempotency-Key');
    expect(await messagesOf(app)).toBe(before);
  });

  it('accepts a key of 255 printable ASCII characters', async () => {
    const key = `${uniqueId('long')} ~!`.padEnd(255, 'x');
    const first = await app.client.post(path, message('long key'), keyed(key));
    const second = await app.client.post(path, message('long key'), keyed(key));
    expect(first.status).toBe(200);
    expect(replayed(second)).toBe('true');
  });
});

describe('POST /v1/notifications with an Idempotency-Key', () => {
  const notification = (template: string) => ({ actor_id: 'ann', recipient_id: 'bob', template: `{{actor}} ${template}`, url: 'https://example.com/n', type: 'url' });
  const notificationsOf = (application: TestApplication) => count('notification.notifications WHERE application_id = $1', [application.id]);

  it('answers a repeat with the first answer and writes one notification; another body is refused', async () => {
    const key = uniqueId('notification');
    const before = await notificationsOf(app);
    const first = await app.client.post('/v1/notifications', notification('pinged you'), keyed(key));
    const second = await app.client.post('/v1/notifications', notification('pinged you'), keyed(key));
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(replayed(second)).toBe('true');
    expect(await notificationsOf(app)).toBe(before + 1);
    const reused = await app.client.post('/v1/notifications', notification('pinged you twice'), keyed(key));
    expect(reused.status).toBe(422);
    expect(reused.body.error).toBe('idempotency_key_reused');
    expect(await notificationsOf(app)).toBe(before + 1);
  });
});

describe('POST /v1/applications with an Idempotency-Key (scoped by customer)', () => {
  const applicationsOf = (customerId: string) => count('identity.applications WHERE customer_id = $1', [customerId]);

  it('answers a repeat with the same application and secret, and creates one', async () => {
    const key = uniqueId('application');
    const customer = asCustomer(system);
    const before = await applicationsOf(system.customer.id);
    const first = await customer.post('/v1/applications', { name: 'retried app' }, keyed(key));
    const second = await customer.post('/v1/applications', { name: 'retried app' }, keyed(key));
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.body.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(replayed(second)).toBe('true');
    expect(await applicationsOf(system.customer.id)).toBe(before + 1);
    // Stored sealed: the secret is not readable in the idempotency record.
    const { rows } = await system.sql.query<{ answer: string }>('SELECT answer FROM identity.idempotency_keys WHERE key = $1', [key]);
    expect(rows[0].answer).not.toContain(first.body.secret);
    // The alias is another path: the key names one request.
    const alias = await customer.post('/v1/projects', { name: 'retried app' }, keyed(key));
    expect(alias.status).toBe(422);
    expect(alias.body.error).toBe('idempotency_key_reused');
  });

  it('works on the /v1/projects alias', async () => {
    const key = uniqueId('project');
    const first = await asCustomer(system).post('/v1/projects', { name: 'retried project' }, keyed(key));
    const second = await asCustomer(system).post('/v1/projects', { name: 'retried project' }, keyed(key));
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(replayed(second)).toBe('true');
  });

  it("keeps each customer's keys apart", async () => {
    const key = uniqueId('customer key');
    const otherCustomer = await system.addCustomer();
    const mine = await asCustomer(system).post('/v1/applications', { name: 'keyed' }, keyed(key));
    const theirs = await request(system.url, 'POST', '/v1/applications', {
      token: await customerToken(otherCustomer.id, otherCustomer.secret),
      body: { name: 'keyed' },
      headers: keyed(key),
    });
    expect(theirs.status).toBe(200);
    expect(replayed(theirs)).toBeNull();
    expect(theirs.body.applicationID).not.toBe(mine.body.applicationID);
  });
});

describe('POST /v1/batch with an Idempotency-Key', () => {
  it('answers a repeat with the first answer and records one batch', async () => {
    const key = uniqueId('batch');
    const batch = { users: [{ id: 'batch-user', name: 'Batch User' }] };
    const batchesOf = () => count('identity.batches WHERE application_id = $1', [app.id]);
    const before = await batchesOf();
    const first = await app.client.post('/v1/batch', batch, keyed(key));
    const second = await app.client.post('/v1/batch', batch, keyed(key));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(replayed(second)).toBe('true');
    expect(await batchesOf()).toBe(before + 1);
  });
});

describe('POST /v1/files with an Idempotency-Key', () => {
  const filesOf = (application: TestApplication) => count(`conversation.files WHERE application_id = $1 AND owner_id <> ''`, [application.id]);

  /** A new form each time: fetch draws a new multipart boundary for every request, as a client's retry does. */
  async function upload(text: string, key: string) {
    const form = new FormData();
    form.set('ownerID', 'ann');
    form.set('file', new Blob([text], { type: 'text/plain' }), 'notes.txt');
    const response = await fetch(`${system.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}`, ...keyed(key) },
      body: form,
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as { error?: string; fileID?: string } };
  }

  it('answers a repeat of the same upload with the first answer and stores one file; another file is refused', async () => {
    const key = uniqueId('file');
    const before = await filesOf(app);
    const first = await upload('the same bytes', key);
    const second = await upload('the same bytes', key);
    expect(first.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await filesOf(app)).toBe(before + 1);
    const otherFile = await upload('other bytes', key);
    expect(otherFile.status).toBe(422);
    expect(otherFile.body.error).toBe('idempotency_key_reused');
    expect(await count('conversation.files WHERE application_id = $1', [app.id])).toBe(before + 1);
  });

  it('tells a repeat while the first upload is still arriving that the key is in use (409, Retry-After: 1)', async () => {
    const key = uniqueId('slow upload');
    const boundary = 'slow-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="ownerID"\r\n\r\nann\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.txt"\r\nContent-Type: text/plain\r\n\r\nfirst half `;
    const tail = `second half\r\n--${boundary}--\r\n`;
    const url = new URL('/v1/files', system.url);
    const slow = http.request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await serverToken(app.id, app.secret)}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(Buffer.byteLength(head + tail)),
        ...keyed(key),
      },
    });
    const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
      slow.on('response', (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
      });
      slow.on('error', reject);
    });
    slow.write(head);
    await until(async () => (await count('conversation.idempotency_keys WHERE key = $1', [key])) === 1, 'the first upload to hold its key');

    const repeat = await upload('whatever', key);
    expect(repeat.status).toBe(409);
    expect(repeat.body.error).toBe('idempotency_key_in_use');
    expect(repeat.headers.get('retry-after')).toBe('1');

    slow.end(tail);
    const first = await answered;
    expect(first.status).toBe(200);
    expect(first.body.fileID).toBeTruthy();
  });
});

describe('expired keys', () => {
  it('are deleted by the prune the workers run, in batches, and only they', async () => {
    const kept = uniqueId('kept');
    const expiring = [uniqueId('expiring'), uniqueId('expiring'), uniqueId('expiring')];
    for (const key of [kept, ...expiring]) await app.client.post(`/v1/threads/${THREAD}/messages`, message(key), keyed(key));
    await system.sql.query(`UPDATE conversation.idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = ANY($1)`, [expiring]);
    const db = createConversationDataSource(system.env.DATABASE_URL, 1);
    await db.initialize();
    try {
      expect(await pruneExpiredIdempotencyKeys(db, 'conversation', 2)).toBe(3);
    } finally {
      await db.destroy();
    }
    const { rows } = await system.sql.query<{ key: string }>('SELECT key FROM conversation.idempotency_keys WHERE key = ANY($1)', [[kept, ...expiring]]);
    expect(rows.map((row) => row.key)).toEqual([kept]);
  });
});
