/**
 * Notifications from activity and their `notification-created` events: each trigger creates
 * exactly its notifications, each notification fires one event (a receiver verifying with the
 * original SDK accepts it) carrying the recipient's list item, and `usersToNotify` of a message's
 * `thread-message-added` names the users its notifications went to. The non-triggers create
 * nothing.
 */
import { describe, expect, it } from 'vitest';
import {
  mentioning,
  messagePath,
  newThread,
  paragraph,
  postMessage,
  putOk,
  recordedEvents,
  settled,
  storedNotifications,
  threadPath,
  type StoredNotification,
} from '../support/activity.js';
import { createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { putEach, seedTeam } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

systemWithReceiver(secrets, (started) => ({ system, receiver } = started));

/** An application of its own (team: ann, bob, dora, erin; carl outside) with a receiver path for both event types. */
async function freshApp(): Promise<{ app: TestApplication; path: string }> {
  const app = await createApplication(system, 'notification events');
  secrets.set(app.id, app.secret);
  await seedTeam(app);
  await putEach(app, '/v1/users', [['erin', { name: 'Erin', shortName: 'E' }]]);
  await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann', 'bob', 'dora', 'erin'] }]]);
  return { app, path: await receiver.register(app, ['thread-message-added', 'notification-created']) };
}

const rowsOf = (rows: StoredNotification[]) =>
  rows.map((row) => [row.kind, row.recipient, row.sender, row.replyActions ?? row.threadActionType ?? row.reaction]);
/** Rows of one message in a stable order (a message's recipients come in no particular order). */
const byRecipient = (rows: unknown[][]) => [...rows].sort((a, b) => String(a[1]).localeCompare(String(b[1])));

/**
 * Checks what every activity test expects of the events once settled: one `notification-created`
 * per notification, for its recipient (its item is checked against the list in
 * test/notification/activity-notifications.test.ts; a message's reactions show as one item, named
 * by the newest), and the `usersToNotify` of each `thread-message-added` naming the recipients of
 * the notifications the new message caused.
 */
async function expectEventsMatchNotifications(app: TestApplication) {
  const rows = await storedNotifications(system, app.id);
  const created = (await recordedEvents(system, app.id, 'notification-created')).map((event) => event.payload);
  expect(created.map((event) => event.recipientUserID).sort()).toEqual(rows.map((row) => row.recipient).sort());
  expect(rows.map((row) => row.id)).toEqual(expect.arrayContaining(created.map((event) => event.id)));
  for (const { id, payload } of await recordedEvents(system, app.id, 'thread-message-added'))
    expect(payload.usersToNotify.map((user: { id: string }) => user.id).sort(), payload.messageID).toEqual(
      rows.filter((row) => row.sourceId === id).map((row) => row.recipient).sort(),
    );
}

describe('notification-created', () => {
  it('fires for POST /v1/notifications, verified by the SDK, with the list item, the recipient and the notification’s time', async () => {
    const { app, path } = await freshApp();
    const created = await app.client.post('/v1/notifications', {
      actor_id: 'ann',
      recipient_id: 'erin',
      template: '{{actor}} pinged {{recipient}}',
      url: 'https://example.com/x',
      type: 'url',
    });
    expect(created.status).toBe(200);
    const [request] = await receiver.waitFor((received) => received.path === path && (received.body as any)?.type === 'notification-created');
    expect(request.verified).toBe(true);
    const [item] = (await app.client.get('/v1/users/erin/notifications')).body.notifications;
    expect(item.id).toBe(created.body.notificationID);
    const body = request.body as any;
    expect(body.event).toEqual({ ...item, recipientUserID: 'erin' });
    expect(body).toEqual({ type: 'notification-created', applicationID: app.id, projectID: app.id, event: body.event, ...body.event });
    // The notification's own time, spread over the envelope's; the signing time stays in the header.
    expect(body.timestamp).toBe(item.timestamp);
    expect(request.headers['x-cord-timestamp']).toMatch(/^\d+$/);
    const [event] = await recordedEvents(system, app.id, 'notification-created');
    expect(request.headers['x-cord-event-id']).toBe(event.id);
  });

  it('a new message: a reply for each mentioned user and subscriber, never the author (not even self-mentioned)', async () => {
    const { app, path } = await freshApp();
    // ann starts the thread mentioning erin and herself; bob replies; ann mentions carl (outside the group).
    const { threadId } = await newThread(app, { content: mentioning('hi', 'erin', 'ann') });
    await postMessage(app, threadId, { authorID: 'bob', content: paragraph('me too') });
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('see', 'carl') });
    await settled(system, app.id);
    const rows = rowsOf(await storedNotifications(system, app.id));
    expect(rows.slice(0, 1)).toEqual([['reply', 'erin', 'ann', ['mention', 'create-thread']]]);
    // Subscribed by then: ann (the creator) and erin (a mentioned member); bob by replying.
    expect(byRecipient(rows.slice(1, 3))).toEqual([
      ['reply', 'ann', 'bob', []],
      ['reply', 'erin', 'bob', []],
    ]);
    expect(byRecipient(rows.slice(3))).toEqual([
      ['reply', 'bob', 'ann', []],
      ['reply', 'carl', 'ann', ['mention']],
      ['reply', 'erin', 'ann', []],
    ]);
    await expectEventsMatchNotifications(app);
    const requests = await receiver.waitFor((received) => received.path === path, rows.length + 3);
    expect(requests.every((received) => received.verified)).toBe(true);
    // Each event once, under its own id.
    const ids = requests.map((received) => received.headers['x-cord-event-id']);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a resolve or reopen with an action message: a thread_action for each subscriber but the actor', async () => {
    const { app } = await freshApp();
    const { threadId } = await newThread(app, { content: mentioning('look', 'erin') });
    await putOk(app, threadPath(threadId), { resolved: true, userID: 'bob' });
    await putOk(app, threadPath(threadId), { resolved: true, userID: 'bob' }); // no change: no action message
    await putOk(app, threadPath(threadId), { resolved: false }); // no userID: no action message
    await putOk(app, threadPath(threadId), { resolved: true, userID: 'erin' });
    // A message on the resolved thread reopens it, with an action message before it.
    await postMessage(app, threadId, { authorID: 'ann', content: paragraph('reopening') });
    await settled(system, app.id);
    const rows = rowsOf(await storedNotifications(system, app.id));
    expect(rows[0]).toEqual(['reply', 'erin', 'ann', ['mention', 'create-thread']]);
    expect(byRecipient(rows.slice(1, 3))).toEqual([
      ['thread_action', 'ann', 'bob', 'resolve'],
      ['thread_action', 'erin', 'bob', 'resolve'],
    ]);
    expect(rows.slice(3)).toEqual([
      ['thread_action', 'ann', 'erin', 'resolve'],
      ['thread_action', 'erin', 'ann', 'unresolve'],
      ['reply', 'erin', 'ann', []],
    ]);
    await expectEventsMatchNotifications(app);
  });

  it('an edit mentioning users not mentioned before: a reply for each of them, not for the author', async () => {
    const { app } = await freshApp();
    const { threadId, messageId } = await newThread(app, { content: mentioning('hi', 'erin') });
    await putOk(app, messagePath(threadId, messageId), { content: mentioning('hi again', 'erin', 'bob', 'ann', 'carl') });
    // Mentioned before, or the author: nothing more.
    await putOk(app, messagePath(threadId, messageId), { content: mentioning('once more', 'erin', 'ann') });
    await settled(system, app.id);
    const rows = rowsOf(await storedNotifications(system, app.id));
    expect(rows[0]).toEqual(['reply', 'erin', 'ann', ['mention', 'create-thread']]);
    expect(byRecipient(rows.slice(1))).toEqual([
      ['reply', 'bob', 'ann', ['mention']],
      ['reply', 'carl', 'ann', ['mention']],
    ]);
    await expectEventsMatchNotifications(app);
    // An edit adds no message.
    expect(await recordedEvents(system, app.id, 'thread-message-added')).toHaveLength(1);
  });

  it('addReactions with a reaction the message did not have, by someone else: a reaction for the author', async () => {
    const { app } = await freshApp();
    // Reactions given when the message is created notify nobody.
    const { threadId, messageId } = await newThread(app, { addReactions: [{ reaction: '👍', userID: 'bob' }] });
    const path = messagePath(threadId, messageId);
    await putOk(app, path, {
      addReactions: [
        { reaction: '🎉', userID: 'bob' },
        { reaction: '👍', userID: 'erin' },
        { reaction: '👍', userID: 'bob' }, // had it already
        { reaction: '❤️', userID: 'ann' }, // the author's own
      ],
    });
    await settled(system, app.id);
    expect(rowsOf(await storedNotifications(system, app.id))).toEqual([
      ['reaction', 'ann', 'bob', '🎉'],
      ['reaction', 'ann', 'erin', '👍'],
    ]);
    await expectEventsMatchNotifications(app);
    // The same reaction again (a new timestamp), and taking one back: nothing.
    await putOk(app, path, { addReactions: [{ reaction: '🎉', userID: 'bob', timestamp: new Date().toISOString() }] });
    await putOk(app, path, { removeReactions: [{ reaction: '👍', userID: 'erin' }] });
    await settled(system, app.id);
    expect(await storedNotifications(system, app.id)).toHaveLength(2);
    expect(await recordedEvents(system, app.id, 'notification-created')).toHaveLength(2);
  });

  it('self-mentions, deletions and threads without a message create nothing', async () => {
    const { app } = await freshApp();
    const { threadId, messageId } = await newThread(app, { content: mentioning('note to self', 'ann') });
    await putOk(app, messagePath(threadId, messageId), { content: mentioning('still me', 'ann') });
    const second = await postMessage(app, threadId, { authorID: 'ann', content: paragraph('alone') });
    expect((await app.client.delete(messagePath(threadId, second))).status).toBe(200);
    expect((await app.client.delete(threadPath(threadId))).status).toBe(200);
    const empty = uniqueId('empty');
    expect((await app.client.post('/v1/threads', { id: empty, groupID: 'team', location: { page: empty }, url: 'https://example.com', name: 'e' })).status).toBe(200);
    await settled(system, app.id);
    expect(await storedNotifications(system, app.id)).toEqual([]);
    expect(await recordedEvents(system, app.id, 'notification-created')).toEqual([]);
  });

  it('a message created soft-deleted notifies, but its notification fires no event', async () => {
    const { app } = await freshApp();
    const { messageId } = await newThread(app, { content: mentioning('gone', 'erin'), deletedTimestamp: new Date().toISOString() });
    await settled(system, app.id);
    expect(rowsOf(await storedNotifications(system, app.id))).toEqual([['reply', 'erin', 'ann', ['mention', 'create-thread']]]);
    expect(await recordedEvents(system, app.id, 'notification-created')).toEqual([]);
    const [added] = await recordedEvents(system, app.id, 'thread-message-added');
    expect(added.payload.messageID).toBe(messageId);
    expect(added.payload.usersToNotify.map((user: { id: string }) => user.id)).toEqual(['erin']);
  });

  it('another application’s receiver gets none of them', async () => {
    const { app } = await freshApp();
    const other = await freshApp();
    await newThread(app, { content: mentioning('hi', 'erin') });
    await settled(system, app.id);
    expect(await recordedEvents(system, app.id, 'notification-created')).toHaveLength(1);
    expect(await recordedEvents(system, other.app.id, 'notification-created')).toEqual([]);
    expect(receiver.received.filter((received) => received.path === other.path)).toEqual([]);
  });
});
