/**
 * `thread-message-added` from the actions that add messages: each trigger gives exactly its events
 * (a receiver verifying with the original SDK gets them), the non-triggers none, and a change that
 * rolls back none. Payloads carry this server's REST objects and the users the message notifies.
 */
import { describe, expect, it } from 'vitest';
import { mention, messagePath, messagesPath, paragraph, postMessage } from '../support/activity.js';
import { createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { seedTeam, putEach } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

systemWithReceiver(secrets, (started) => ({ system, receiver } = started));

/** An application of its own with ann, bob, carl (team: ann, bob, dora) and a receiver path for its events. */
async function freshApp(): Promise<{ app: TestApplication; path: string }> {
  const app = await createApplication(system, 'events');
  secrets.set(app.id, app.secret);
  await seedTeam(app);
  await putEach(app, '/v1/users', [['erin', { name: 'Erin', shortName: 'E', profilePictureURL: 'https://example.com/e.png', metadata: { role: 'lead' } }]]);
  await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann', 'bob', 'dora', 'erin'] }]]);
  return { app, path: await receiver.register(app, ['thread-message-added']) };
}

function newThread(app: TestApplication, extra: Record<string, unknown> = {}) {
  const threadId = uniqueId('thread');
  return {
    threadId,
    messageId: postMessage(app, threadId, {
      authorID: 'ann',
      content: paragraph('first'),
      createThread: { groupID: 'team', location: { page: threadId }, url: `https://example.com/${threadId}`, name: `Thread ${threadId}` },
      ...extra,
    }),
  };
}

/**
 * Every event the application's deliveries recorded, once `marker` (a message id whose event is
 * recorded last) is among them: the relay records a thread's events in order, so whatever came
 * before the marker is there too.
 */
async function eventsUntil(path: string, markerMessageId: string): Promise<ReceivedWebhook[]> {
  await receiver.waitFor((request) => request.path === path && (request.body as any)?.messageID === markerMessageId);
  return receiver.received.filter((request) => request.path === path);
}

const messageIdsOf = (requests: ReceivedWebhook[]) => requests.map((request) => (request.body as any).messageID);

describe('thread-message-added', () => {
  it('is sent for a message that creates its thread, verified by the SDK, with the REST objects of that moment', async () => {
    const { app, path } = await freshApp();
    const { threadId, messageId } = newThread(app, {
      content: [{ type: 'p', children: [{ text: 'hi ' }, mention('erin'), { text: ' and ' }, mention('ann')] }],
      metadata: { n: 1 },
    });
    const id = await messageId;
    const [event] = await eventsUntil(path, id);
    expect(event.verified).toBe(true);
    const body = event.body as any;
    const message = (await app.client.get(messagePath(threadId, id))).body;
    const thread = (await app.client.get(`/v1/threads/${encodeURIComponent(threadId)}`)).body;
    const ann = { id: 'ann', name: 'Ann', shortName: null, displayName: 'Ann', secondaryDisplayName: 'Ann', profilePictureURL: null, metadata: {} };
    expect(body).toMatchObject({
      type: 'thread-message-added',
      applicationID: app.id,
      projectID: app.id,
      threadID: threadId,
      messageID: id,
      groupID: 'team',
      orgID: 'team',
      organizationID: 'team',
      messageType: 'user_message',
      metadata: { n: 1 },
      url: message.url,
      content: message.content,
      plaintext: message.plaintext,
      author: ann,
      message: { ...message, author: ann },
      thread,
    });
    expect(body.event).toEqual(Object.fromEntries(Object.keys(body.event).map((key) => [key, body[key]])));
    // The mentioned user is notified (the author's self-mention is not): mentioned, and the message started the thread.
    expect(body.usersToNotify).toEqual([
      {
        id: 'erin',
        name: 'Erin',
        shortName: 'E',
        displayName: 'E',
        secondaryDisplayName: 'Erin',
        profilePictureURL: 'https://example.com/e.png',
        metadata: { role: 'lead' },
        replyActions: ['mention', 'create-thread'],
      },
    ]);
  });

  it('notifies the thread’s subscribers of a reply, without the author', async () => {
    const { app, path } = await freshApp();
    const { threadId, messageId } = newThread(app);
    await messageId;
    // bob subscribes by replying; ann (the creator) is subscribed already.
    await postMessage(app, threadId, { authorID: 'bob', content: paragraph('me too') });
    const reply = await postMessage(app, threadId, { authorID: 'ann', content: paragraph('thanks') });
    const events = await eventsUntil(path, reply);
    const last = events.find((request) => (request.body as any).messageID === reply)!.body as any;
    expect(last.usersToNotify.map((user: { id: string; replyActions: string[] }) => [user.id, user.replyActions])).toEqual([['bob', []]]);
  });

  it('on a resolved thread, is sent for the automatic reopen action message and then for the message', async () => {
    const { app, path } = await freshApp();
    const { threadId, messageId } = newThread(app);
    const first = await messageId;
    await postMessage(app, threadId, { authorID: 'bob', content: paragraph('subscribed') });
    expect((await app.client.put(`/v1/threads/${encodeURIComponent(threadId)}`, { resolved: true })).status).toBe(200);
    const reply = await postMessage(app, threadId, { authorID: 'ann', content: paragraph('reopening') });
    const events = await eventsUntil(path, reply);
    const bodies = events.map((request) => request.body as any).sort((a, b) => a.message.createdTimestamp.localeCompare(b.message.createdTimestamp));
    expect(bodies.map((body) => body.messageType)).toEqual(['user_message', 'user_message', 'action_message', 'user_message']);
    expect(bodies[0].messageID).toBe(first);
    const reopen = bodies[2];
    expect(reopen.message.translationKey).toBe('cord.thread_unresolved');
    expect(reopen.usersToNotify).toEqual([expect.objectContaining({ id: 'bob', replyActions: null })]);
    // Built after the reopen committed: the thread is shown reopened in both.
    expect(reopen.thread.resolved).toBe(false);
    expect(bodies[3].thread.resolved).toBe(false);
  });

  it('is sent for the action message of a PUT that resolves or reopens with a userID, and not otherwise', async () => {
    const { app, path } = await freshApp();
    const { threadId, messageId } = newThread(app);
    await messageId;
    const threadPath = `/v1/threads/${encodeURIComponent(threadId)}`;
    expect((await app.client.put(threadPath, { resolved: true })).status).toBe(200); // no userID: no action message
    expect((await app.client.put(threadPath, { resolved: false, userID: 'bob' })).status).toBe(200);
    expect((await app.client.put(threadPath, { resolved: false, userID: 'bob' })).status).toBe(200); // no flip
    expect((await app.client.put(threadPath, { resolved: true, userID: 'bob' })).status).toBe(200);
    // Non-triggers: message update, thread creation without a message, message delete (of a
    // message whose own event was sent: a message deleted before its event is built has none).
    const firstId = await messageId;
    await eventsUntil(path, firstId);
    expect((await app.client.put(messagePath(threadId, firstId), { content: paragraph('edited') })).status).toBe(200);
    expect((await app.client.post('/v1/threads', { id: uniqueId('empty'), groupID: 'team', location: { page: 'x' }, url: 'https://example.com/x', name: 'x' })).status).toBe(200);
    expect((await app.client.delete(messagePath(threadId, firstId))).status).toBe(200);
    const last = await postMessage(app, threadId, { authorID: 'ann', content: paragraph('last') });
    const events = await eventsUntil(path, last);
    // Deliveries go out concurrently: ordered by the messages' creation.
    const bodies = events.map((request) => request.body as any).sort((a, b) => a.message.createdTimestamp.localeCompare(b.message.createdTimestamp));
    expect(bodies.map((body) => [body.messageType, body.message.translationKey])).toEqual([
      ['user_message', null],
      ['action_message', 'cord.thread_unresolved'],
      ['action_message', 'cord.thread_resolved'],
      // The last message reopens the resolved thread.
      ['action_message', 'cord.thread_unresolved'],
      ['user_message', null],
    ]);
    // The creator (ann) is subscribed and is told of bob's resolve and reopen.
    expect(bodies[1].usersToNotify.map((user: { id: string }) => user.id)).toEqual(['ann']);
  });

  it('is not sent for a message whose transaction rolls back', async () => {
    const { app, path } = await freshApp();
    const { threadId, messageId } = newThread(app);
    await messageId;
    const doomed = uniqueId('doomed');
    await system.sql.query(
      `CREATE FUNCTION conversation.fail_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN IF NEW.external_id = '${doomed}' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$`,
    );
    await system.sql.query(`CREATE TRIGGER fail_doomed AFTER INSERT ON conversation.messages FOR EACH ROW EXECUTE FUNCTION conversation.fail_doomed()`);
    try {
      const failed = await app.client.post(messagesPath(threadId), { id: doomed, authorID: 'ann', content: paragraph('never') });
      expect(failed.status).toBeGreaterThanOrEqual(500);
    } finally {
      await system.sql.query(`DROP TRIGGER fail_doomed ON conversation.messages; DROP FUNCTION conversation.fail_doomed()`);
    }
    const marker = await postMessage(app, threadId, { authorID: 'ann', content: paragraph('after') });
    const events = await eventsUntil(path, marker);
    expect(messageIdsOf(events)).not.toContain(doomed);
    expect(events).toHaveLength(2);
  });
});
