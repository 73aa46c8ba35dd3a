/**
 * Deleting a group, a user or an application (decisions.md 23, 31): the DELETE answers once
 * nothing it removes can be read (counts included), and purge jobs then remove the rows.
 */
import type { AddressInfo } from 'node:net';
import { createLogger } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadIdentityConfig } from '../../services/identity/src/config.js';
import { createIdentityService } from '../../services/identity/src/service.js';
import { freePort } from '../support/ports.js';
import { createApplication, request, type TestApplication } from '../support/client.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;

beforeAll(async () => {
  system = await startSystem();
});
afterAll(() => system?.stop());

const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];

async function rows(table: string, applicationId: string): Promise<number> {
  const result = await system.sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE application_id = $1`, [applicationId]);
  return result.rows[0].n;
}

async function seed(app: TestApplication) {
  await app.client.put('/v1/users/ann', { name: 'Ann' });
  await app.client.put('/v1/users/bob', { name: 'Bob' });
  await app.client.put('/v1/groups/doomed', { name: 'Doomed', members: ['ann', 'bob'] });
  await app.client.put('/v1/groups/kept', { name: 'Kept', members: ['ann', 'bob'] });
  const post = async (threadId: string, groupID: string, authorID: string, text: string) => {
    const response = await app.client.post(`/v1/threads/${threadId}/messages`, {
      authorID,
      content: paragraph(text),
      createThread: { groupID, location: { page: threadId }, url: `https://example.com/${threadId}`, name: threadId },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.messageID as string;
  };
  for (let index = 0; index < 5; index++) await post('in-doomed', 'doomed', index % 2 ? 'ann' : 'bob', `doomed ${index}`);
  await post('in-kept', 'kept', 'ann', 'kept by ann');
  await post('in-kept', 'kept', 'bob', 'kept by bob');
  await post('only-ann', 'kept', 'ann', 'ann alone');
  const notified = await app.client.post('/v1/notifications', {
    actor_id: 'ann',
    recipient_id: 'bob',
    template: '{{actor}} says hi',
    url: 'https://example.com/n',
    type: 'url',
  });
  expect(notified.status).toBe(200);
}

describe('deleting a group', () => {
  it('hides its threads and messages at once, then purges them, leaving other groups intact', async () => {
    const app = await createApplication(system);
    await seed(app);
    const deleted = await app.client.delete('/v1/groups/doomed');
    expect(deleted.body).toEqual({ success: true, message: 'You successfully deleted group doomed' });

    expect((await app.client.get('/v1/threads/in-doomed')).status).toBe(404);
    const threads = await request(system.url, 'GET', '/v1/threads', { token: await serverToken(app.id, app.secret) });
    expect(threads.body.map((thread: { id: string }) => thread.id).sort()).toEqual(['in-kept', 'only-ann']);
    expect(threads.headers.get('x-total-count')).toBe('2');
    const messages = await app.client.get('/v1/messages');
    expect(messages.body.pagination.total).toBe(3);
    expect(messages.body.messages.every((message: { threadID: string }) => message.threadID !== 'in-doomed')).toBe(true);

    await waitForQueuesIdle(system);
    expect(await rows('conversation.threads', app.id)).toBe(2);
    expect(await rows('conversation.messages', app.id)).toBe(3);
    expect((await app.client.get('/v1/users/ann')).body.groups).toEqual(['kept']);
  });
});

describe('deleting a user permanently', () => {
  it('hides their messages, the threads left empty, their reactions and notifications, then purges them', async () => {
    const app = await createApplication(system);
    await seed(app);
    const [keptByBob] = (await app.client.get('/v1/threads/in-kept/messages?sortDirection=ascending')).body.filter(
      (message: { authorID: string }) => message.authorID === 'bob',
    );
    await app.client.put(`/v1/threads/in-kept/messages/${encodeURIComponent(keptByBob.id)}`, {
      addReactions: [{ reaction: '👍', userID: 'ann' }],
    });

    const deleted = await app.client.delete('/v1/users/ann', { permanently_delete: true });
    expect(deleted.body).toMatchObject({ success: true, message: 'User deleted.', userID: 'ann', failedDeletionIDs: [] });

    expect((await app.client.get('/v1/threads/only-ann')).status).toBe(404);
    const kept = await app.client.get('/v1/threads/in-kept');
    expect(kept.body).toMatchObject({ total: 1, userMessages: 1 });
    expect(kept.body.participants.map((participant: { userID: string }) => participant.userID)).not.toContain('ann');
    const remaining = await app.client.get('/v1/threads/in-kept/messages');
    expect(remaining.body.map((message: { authorID: string }) => message.authorID)).toEqual(['bob']);
    expect(remaining.body[0].reactions).toEqual([]);
    const messages = await app.client.get('/v1/messages');
    expect(messages.body.messages.some((message: { authorID: string }) => message.authorID === 'ann')).toBe(false);
    const notifications = await app.client.get('/v1/users/bob/notifications');
    expect(notifications.body).toEqual({ notifications: [], pagination: { token: null, total: 0 } });

    await waitForQueuesIdle(system);
    const authored = await system.sql.query(
      `SELECT count(*)::int AS n FROM conversation.messages WHERE application_id = $1 AND author_id = 'ann'`,
      [app.id],
    );
    expect(authored.rows[0].n).toBe(0);
    expect(await rows('notification.notifications', app.id)).toBe(0);
    // Bob's messages in the deleted group were not Ann's: they stay.
    expect((await app.client.get('/v1/threads/in-doomed')).body.total).toBe(3);
  });
});

describe('deleting an application', () => {
  it('purges everything it owned in every service and leaves other applications intact', async () => {
    const doomed = await createApplication(system, 'doomed');
    const bystander = await createApplication(system, 'bystander');
    await seed(doomed);
    await seed(bystander);
    const { asCustomer } = await import('../support/client.js');
    const deleted = await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret });
    expect(deleted.status).toBe(200);
    expect((await doomed.client.get('/v1/threads/in-kept')).status).toBe(401);

    await waitForQueuesIdle(system);
    for (const table of ['conversation.messages', 'conversation.threads', 'notification.notifications'])
      expect(await rows(table, doomed.id), table).toBe(0);
    expect(await rows('conversation.messages', bystander.id)).toBe(8);
    expect((await bystander.client.get('/v1/messages')).body.pagination.total).toBe(8);
  });
});

describe('a deletion whose cascade cannot reach a service', () => {
  it('answers 503 with nothing deleted, and completes when repeated once the service is back', async () => {
    const app = await createApplication(system);
    await seed(app);
    // An identity whose conversation service is unreachable (nothing listens on that port).
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    const identity = await createIdentityService(
      loadIdentityConfig({ ...system.env, CONVERSATION_URL: unreachable }),
      createLogger('test', 'silent'),
    );
    const server = identity.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/groups/doomed`, {
        method: 'DELETE',
        headers: { 'x-collab-internal-token': system.env.INTERNAL_TOKEN, 'x-collab-application-id': app.id },
      });
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: string }).error).toBe('service_unavailable');
      expect(response.headers.get('retry-after')).toBe('1');
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await identity.close();
    }
    expect((await app.client.get('/v1/groups/doomed')).status).toBe(200);

    const repeated = await app.client.delete('/v1/groups/doomed');
    expect(repeated.status).toBe(200);
    expect((await app.client.get('/v1/threads/in-doomed')).status).toBe(404);
    await waitForQueuesIdle(system);
    expect(await rows('conversation.threads', app.id)).toBe(2);
  });
});
