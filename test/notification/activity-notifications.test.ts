/**
 * Notifications from activity (decisions.md 43): the internal API that creates them, once per
 * recipient and cause.
 */
import { randomUUID } from 'node:crypto';
import { createInternalClient, notificationInternal } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { messageRefOf, newThread, settled, storedNotifications } from '../support/activity.js';
import { createApplication, request, type TestApplication } from '../support/client.js';
import { putEach, seedTeam } from '../support/seed.js';
import { startSystem, type TestSystem } from '../support/system.js';

let system: TestSystem;

beforeAll(async () => {
  system = await startSystem();
});
afterAll(() => system?.stop());

/** An application of its own: team (ann, bob, dora deleted, erin, fay), carl outside. */
async function freshApp(): Promise<TestApplication> {
  const app = await createApplication(system, 'activity notifications');
  await seedTeam(app);
  await putEach(app, '/v1/users', [
    ['erin', { name: 'Erin', shortName: 'E', profilePictureURL: 'https://example.com/e.png', metadata: { role: 'lead' } }],
    ['fay', { name: 'Fay' }],
  ]);
  await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann', 'bob', 'dora', 'erin', 'fay'] }]]);
  return app;
}

async function list(app: TestApplication, userId: string, query = '') {
  const response = await app.client.get(`/v1/users/${encodeURIComponent(userId)}/notifications${query}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as { notifications: any[]; pagination: { token: string | null; total: number } };
}

describe('the internal API behind them', () => {
  const internal = (service: 'notification' | 'conversation') =>
    createInternalClient({ baseUrl: system.serviceUrls[service], internalToken: system.env.INTERNAL_TOKEN, service });

  it('creating notifications again for the same outbox entry creates nothing more', async () => {
    const app = await freshApp();
    const { messageId } = await newThread(app);
    await settled(system, app.id);
    const ref = await messageRefOf(system, app.id, messageId);
    const { rows } = await system.sql.query(`SELECT thread_id::text AS ref FROM conversation.messages WHERE internal_id = $1`, [ref]);
    const body = { sourceId: randomUUID(), linkBase: system.url, senderId: 'ann', messageRef: ref, threadRef: rows[0].ref, replies: [{ recipientId: 'bob', replyActions: [] }] };
    const contract = notificationInternal.createActivity;
    const call = () => internal('notification').call(contract.method, contract.path, { applicationId: app.id, requestId: randomUUID(), body });
    expect(contract.response.parse(await call())).toEqual({ created: 1 });
    expect(contract.response.parse(await call())).toEqual({ created: 0 });
    await settled(system, app.id);
    expect((await storedNotifications(system, app.id)).map((row) => row.recipient)).toEqual(['bob']);
    expect((await list(app, 'bob')).pagination.total).toBe(1);
  });

  it('refuses a body outside the contract with 400', async () => {
    const app = await freshApp();
    const response = await request(system.serviceUrls.notification, 'POST', notificationInternal.createActivity.path, {
      body: { sourceId: 'not-a-uuid', linkBase: '', senderId: 'ann', messageRef: '1', threadRef: '1' },
      headers: { 'x-collab-internal-token': system.env.INTERNAL_TOKEN, 'x-collab-application-id': app.id },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_field');
  });
});
