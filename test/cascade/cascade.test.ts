/**
 * Deleting a group, a user or an application: the DELETE answers once
 * nothing it removes can be read (counts included), and purge jobs then remove the rows. Identity
 * records the deletion in its outbox with its own delete: a deletion that fails in identity
 * leaves everything as it was, and one that cannot reach a service at once finishes by itself.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, createRedis, queuePrefix } from '@collab/shared';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { freePort, until } from '@collab/shared/devkit';
import { loadIdentityConfig } from '../../services/identity/src/config.js';
import { createIdentityService } from '../../services/identity/src/service.js';
import { settled } from '../support/activity.js';
import { asCustomer, createApplication, request, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;

systemForFile((started) => (system = started));

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
  // The notifications the messages cause exist before a test deletes anything: bob has ann's two
  // replies in in-doomed besides the one above.
  await settled(system, app.id);
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
    // Bob's notification of the reaction exists before ann is deleted, so her deletion is what removes it.
    await settled(system, app.id);

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

/** Outbox entries of an application that identity has not carried into the other services yet. */
const outboxEntries = (applicationId: string) => rows('identity.outbox', applicationId);

describe('a deletion whose cascade cannot reach a service', () => {
  it('answers 503, and completes by itself once the service can be reached, without a repeat', async () => {
    const app = await createApplication(system);
    await seed(app);
    // An identity whose conversation service is unreachable (nothing listens on that port).
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    const identity = await createIdentityService(
      loadIdentityConfig({ ...system.env, CONVERSATION_URL: unreachable }),
      createLogger('test', 'silent'),
    );
    const server = http.createServer(identity.app).listen(0, '127.0.0.1');
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
    // Identity's part committed: the group is gone, and a repeat finds nothing to delete.
    expectError(await app.client.get('/v1/groups/doomed'), 404, 'group_not_found');
    expectError(await app.client.delete('/v1/groups/doomed'), 401, 'group_not_found');

    // The system's relay reaches conversation: the deletion finishes without being asked again.
    await until(async () => (await app.client.get('/v1/threads/in-doomed')).status === 404, "the relay's retry");
    await until(async () => (await outboxEntries(app.id)) === 0, 'the outbox entry to be handled');
    await waitForQueuesIdle(system);
    expect(await rows('conversation.threads', app.id)).toBe(2);
  });
});

/**
 * Makes identity's transactions that delete the application's rows in `table` fail at their
 * commit (as a lost connection or a serialization failure could): after everything they do,
 * including the point where the other services used to be told.
 */
async function failingDeleteCommits<T>(table: 'groups' | 'users' | 'applications', applicationId: string, run: () => Promise<T>): Promise<T> {
  const column = table === 'applications' ? 'id' : 'application_id';
  await system.sql.query(
    `CREATE OR REPLACE FUNCTION public.refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN RAISE EXCEPTION 'delete refused by the test'; END $$`,
  );
  await system.sql.query(
    `CREATE CONSTRAINT TRIGGER refuse_delete AFTER DELETE ON identity.${table} DEFERRABLE INITIALLY DEFERRED
     FOR EACH ROW WHEN (OLD.${column} = '${applicationId}') EXECUTE FUNCTION public.refuse_delete()`,
  );
  try {
    return await run();
  } finally {
    await system.sql.query(`DROP TRIGGER refuse_delete ON identity.${table}`);
  }
}

/** The conversation purge jobs ever queued for the application (kept in Redis after they complete). */
async function conversationPurgeJobs(applicationId: string): Promise<string[]> {
  const connection = createRedis(system.env.REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('conversation-purge', { connection, prefix: queuePrefix(system.env.REDIS_PREFIX, 'conversation-purge') });
  try {
    const jobs = await queue.getJobs(['completed', 'failed', 'waiting', 'active', 'delayed']);
    return jobs.filter((job) => job.data.applicationId === applicationId).map((job) => job.name);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

describe('a deletion whose transaction fails in identity', () => {
  it('of a group leaves its threads and messages readable, and nothing is left to carry out', async () => {
    const app = await createApplication(system);
    await seed(app);
    const deleted = await failingDeleteCommits('groups', app.id, () => app.client.delete('/v1/groups/doomed'));
    expectError(deleted, 500, 'error');

    expect((await app.client.get('/v1/groups/doomed')).status).toBe(200);
    expect((await app.client.get('/v1/threads/in-doomed')).body.total).toBe(5);
    expect((await app.client.get('/v1/messages')).body.pagination.total).toBe(8);
    expect(await conversationPurgeJobs(app.id)).toEqual([]);
    // No relay will ever act on it: nothing was recorded.
    expect(await outboxEntries(app.id)).toBe(0);
  });

  it('of a user leaves their messages and notifications readable, and nothing is left to carry out', async () => {
    const app = await createApplication(system);
    await seed(app);
    const deleted = await failingDeleteCommits('users', app.id, () => app.client.delete('/v1/users/ann', { permanently_delete: true }));
    expectError(deleted, 500, 'error');

    expect((await app.client.get('/v1/users/ann')).status).toBe(200);
    expect((await app.client.get('/v1/threads/only-ann')).status).toBe(200);
    expect((await app.client.get('/v1/messages')).body.pagination.total).toBe(8);
    expect((await app.client.get('/v1/users/bob/notifications')).body.pagination.total).toBe(3);
    expect(await conversationPurgeJobs(app.id)).toEqual([]);
    expect(await outboxEntries(app.id)).toBe(0);
  });

  it('of an application tells no other service: its data stays, and no purge is ever queued', async () => {
    const app = await createApplication(system);
    await seed(app);
    const deleted = await failingDeleteCommits('applications', app.id, () =>
      asCustomer(system).delete(`/v1/applications/${app.id}`, { secret: app.secret }),
    );
    expectError(deleted, 500, 'error');

    expect((await app.client.get('/v1/messages')).body.pagination.total).toBe(8);
    expect((await app.client.get('/v1/users/bob/notifications')).body.pagination.total).toBe(3);
    expect(await conversationPurgeJobs(app.id)).toEqual([]);
    expect(await rows('conversation.application_purges', app.id)).toBe(0);
    expect(await rows('notification.application_purges', app.id)).toBe(0);
    expect(await outboxEntries(app.id)).toBe(0);
  });
});
