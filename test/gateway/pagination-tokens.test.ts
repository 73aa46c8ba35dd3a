/**
 * Pagination tokens on every paged route of the route table, through the gateway: a token the
 * server did not issue is `400 invalid_field` "Pagination token is not valid", never a 5xx. The
 * tokens here are real ones from a first page with one field replaced by a value the database
 * would refuse: an impossible date, a bigint out of range, text with NUL.
 */
import { cursorField, type CursorField } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import type { TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { nextPageToken, pagedRoutes, pathOf } from '../support/pages.js';
import { systemWithApplication } from '../support/system.js';

let app: TestApplication;

/** Path parameters of the paged routes, by name: each names seeded data with two or more items. */
const SEED: Record<string, string> = { userID: 'alice', groupID: 'team', orgID: 'team' };

systemWithApplication('pagination tokens', async (started) => {
  ({ app } = started);
  const ok = async (response: Promise<{ status: number; body: unknown }>) => expect((await response).status).toBe(200);
  for (const id of ['alice', 'bob']) await ok(app.client.put(`/v1/users/${id}`, { name: id }));
  await ok(app.client.put('/v1/groups/team', { name: 'Team', members: ['alice', 'bob'] }));
  await ok(app.client.put('/v1/groups/crew', { name: 'Crew' }));
  // A webhook, so that the messages leave deliveries in the log (to a name that never resolves,
  // RFC 6761's .invalid: WEBHOOK_RETRY_HOURS=0 makes each fail once, for good).
  await expect((await app.client.post(`/v1/applications/${app.id}/webhooks`, { url: 'http://receiver.invalid/hook', events: ['thread-message-added'] })).status).toBe(201);
  for (const thread of ['t1', 't2'])
    await ok(
      app.client.post(`/v1/threads/${thread}/messages`, {
        id: `${thread}-m`,
        authorID: 'alice',
        content: [{ type: 'p', children: [{ text: 'hello' }] }],
        createThread: { groupID: 'team', location: { page: thread }, url: 'https://example.com', name: thread },
      }),
    );
  for (let count = 0; count < 2; count++)
    await ok(
      app.client.post('/v1/notifications', { actor_id: 'bob', recipient_id: 'alice', template: '{{actor}} waves', url: 'https://example.com', type: 'url' }),
    );
  // The events reach the delivery log through the outbox relay.
  for (const deadline = Date.now() + 20_000; (await app.client.get('/v1/webhooks/deliveries?limit=0')).body.pagination.total < 2; ) {
    if (Date.now() > deadline) throw new Error('seeding: the message events did not reach the delivery log');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}, { env: { WEBHOOK_RETRY_HOURS: '0' } });

/** For each field kind, a value of the right JSON type that the database would refuse. */
const REFUSED = new Map<CursorField, { what: string; value: string }>([
  [cursorField.timestamp, { what: 'an impossible date', value: '2024-13-45 99:99:99' }],
  [cursorField.bigintId, { what: 'a number beyond bigint', value: '9223372036854775808' }],
  [cursorField.text, { what: 'text with NUL', value: 'a\u0000' }],
  [cursorField.uuid, { what: 'a string that is no UUID', value: 'not-a-uuid' }],
]);

const cases = pagedRoutes().flatMap(({ route, param, codec }) =>
  Object.entries(codec.shape).map(([field, kind]) => [`${route.method} ${route.path}`, field, REFUSED.get(kind)!.what, { route, param, field, kind }] as const),
);

describe('a real token with one field the database would refuse', () => {
  it('covers every paged route, including threads and messages', () => {
    expect(new Set(cases.map(([label]) => label))).toEqual(
      new Set([
        'GET /v1/users',
        'GET /v1/groups',
        'GET /v1/groups/:groupID/members',
        'GET /v1/organizations/:orgID/members',
        'GET /v1/threads',
        'GET /v1/messages',
        'GET /v1/users/:userID/notifications',
        'GET /v1/webhooks/deliveries',
      ]),
    );
  });

  it.each(cases)('%s with %s as %s: 400 invalid_field', async (_label, _field, _what, { route, param, field, kind }) => {
    const path = pathOf(route, SEED);
    const first = await app.client.get(`${path}?limit=1`);
    expect(first.status).toBe(200);
    const token = nextPageToken(first.body, first.headers.get('link'));
    expect(token, 'the first page has a next-page token').toEqual(expect.any(String));
    const page = (sent: string) => app.client.get(`${path}?limit=1&${param}=${encodeURIComponent(sent)}`);
    expect((await page(token!)).status).toBe(200);

    const cursor = JSON.parse(Buffer.from(token!, 'base64').toString('utf8'));
    const forged = Buffer.from(JSON.stringify({ ...cursor, [field]: REFUSED.get(kind)!.value })).toString('base64');
    expectError(await page(forged), 400, 'invalid_field', 'Pagination token is not valid');
  });
});
