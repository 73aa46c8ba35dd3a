/**
 * Notifications from activity in GET /v1/users/<ID>/notifications: each kind
 * with its header, header translation and attachment (the message as GET message answers it, the
 * thread as GET thread does), a message's reactions as one item, and notifications gone with what
 * they point to. Then the internal API behind them, and tenant isolation.
 */
import { randomUUID } from 'node:crypto';
import { createInternalClient, notificationInternal } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import {
  mentioning,
  messagePath,
  messageRefOf,
  newThread,
  paragraph,
  postMessage,
  putOk,
  settled,
  storedNotifications,
  threadPath,
  uploadFile,
} from '../support/activity.js';
import { createApplication, request, type TestApplication } from '../support/client.js';
import { putEach, seedTeam } from '../support/seed.js';
import { systemForFile, type TestSystem } from '../support/system.js';

let system: TestSystem;

systemForFile((started) => (system = started));

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

/** The user objects of headers and translations (ClientUserData). */
const user = (id: string, name: string) => ({ id, name, shortName: null, displayName: name, secondaryDisplayName: name, profilePictureURL: null, metadata: {} });
const ANN = user('ann', 'Ann');
const BOB = user('bob', 'Bob');
const FAY = user('fay', 'Fay');
const ERIN = { id: 'erin', name: 'Erin', shortName: 'E', displayName: 'E', secondaryDisplayName: 'Erin', profilePictureURL: 'https://example.com/e.png', metadata: { role: 'lead' } };

async function list(app: TestApplication, userId: string, query = '') {
  const response = await app.client.get(`/v1/users/${encodeURIComponent(userId)}/notifications${query}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body as { notifications: any[]; pagination: { token: string | null; total: number } };
}

const getBody = async (app: TestApplication, path: string) => {
  const response = await app.client.get(path);
  expect(response.status).toBe(200);
  return response.body;
};

/** A file link without its expiry and signature (signed anew, to the second, at every read). */
const withoutSignatures = (message: any) => ({
  ...message,
  attachments: message.attachments.map((attachment: any) => ({ ...attachment, url: attachment.url.split('?')[0] })),
});

describe('reply notifications', () => {
  it('list with the author, the phrase and the thread name, and the message and thread as GET answers them', async () => {
    const app = await freshApp();
    const { threadId, messageId, name } = await newThread(app, { content: mentioning('hi', 'erin') });
    await settled(system, app.id);
    const [row] = await storedNotifications(system, app.id);
    const page = await list(app, 'erin');
    expect(page).toEqual({
      notifications: [
        {
          id: row.id,
          senderUserIDs: ['ann'],
          iconUrl: null,
          header: [
            { type: 'user', userID: 'ann', user: ANN },
            { type: 'text', text: ' mentioned you in ', bold: false },
            { type: 'text', text: name, bold: true },
          ],
          headerTranslation: { key: 'cord.reply_mention', parameters: { senders: [ANN], threadName: name } },
          attachment: { type: 'message', messageID: messageId, threadID: threadId, message: await getBody(app, messagePath(threadId, messageId)) },
          readStatus: 'unread',
          timestamp: row.createdAt.toISOString(),
          extraClassnames: null,
          metadata: {},
          text: `Ann mentioned you in ${name}`,
        },
      ],
      pagination: { token: null, total: 1 },
    });
    // The message object is GET message's: no author object.
    expect(page.notifications[0].attachment.message).not.toHaveProperty('author');
  });

  it('take the phrase of the first rule they match: mention and file, mention, new thread, else a reply', async () => {
    const app = await freshApp();
    // bob is subscribed to a new thread when it is created: he is told of its creation.
    await newThread(app, {
      createThread: { groupID: 'team', location: { page: 'planning' }, url: 'https://example.com/p', name: 'Planning', addSubscribers: ['bob'] },
    });
    // On another thread of ann's, bob replies (and subscribes); ann sends a file to erin (mentioned)
    // and bob (subscribed); erin thanks them.
    const { threadId, name } = await newThread(app);
    await postMessage(app, threadId, { authorID: 'bob', content: paragraph('subscribing') });
    const fileId = await uploadFile(app, 'ann', 'minutes.txt', 'minutes');
    const withFile = await postMessage(app, threadId, {
      authorID: 'ann',
      content: mentioning('minutes for', 'erin'),
      addAttachments: [{ type: 'file', id: fileId }],
    });
    await postMessage(app, threadId, { authorID: 'erin', content: paragraph('thanks') });
    await settled(system, app.id);

    const headerOf = (item: any) => [item.header[1].text, item.header[2].text, item.headerTranslation.key];
    expect((await list(app, 'bob')).notifications.map(headerOf)).toEqual([
      [' replied on ', name, 'cord.reply'], // erin's thanks
      [' replied on ', name, 'cord.reply'], // ann's file, not mentioning bob
      [' created a new thread named ', 'Planning', 'cord.thread_create'],
    ]);
    const erin = (await list(app, 'erin')).notifications;
    expect(erin.map(headerOf)).toEqual([[' mentioned you and sent you a file in ', name, 'cord.reply_mention_attachment']]);
    expect(erin[0].text).toBe(`Ann mentioned you and sent you a file in ${name}`);
    expect((await list(app, 'ann')).notifications.map(headerOf)).toEqual([
      [' replied on ', name, 'cord.reply'],
      [' replied on ', name, 'cord.reply'],
    ]);
    // The file's link points at the API the list was asked through, as GET message's does.
    const message = erin[0].attachment.message;
    expect(withoutSignatures(message)).toEqual(withoutSignatures(await getBody(app, messagePath(threadId, withFile))));
    expect(message.attachments[0].url.startsWith(`${system.url}/v1/files/`)).toBe(true);
  });
});

describe('thread action notifications', () => {
  it('list who resolved or reopened the thread, with the thread as GET answers it', async () => {
    const app = await freshApp();
    const { threadId, name } = await newThread(app);
    await putOk(app, threadPath(threadId), { resolved: true, userID: 'bob' });
    await settled(system, app.id);
    const [resolved] = (await list(app, 'ann')).notifications;
    expect(resolved).toMatchObject({
      senderUserIDs: ['bob'],
      iconUrl: null,
      header: [
        { type: 'user', userID: 'bob', user: BOB },
        { type: 'text', text: ' resolved the thread ', bold: false },
        { type: 'text', text: name, bold: true },
      ],
      headerTranslation: { key: 'cord.thread_resolve', parameters: { senders: [BOB], threadName: name } },
      attachment: { type: 'thread', thread: await getBody(app, threadPath(threadId)) },
      readStatus: 'unread',
      text: `Bob resolved the thread ${name}`,
    });
    await putOk(app, threadPath(threadId), { resolved: false, userID: 'bob' });
    await settled(system, app.id);
    const [reopened, first] = (await list(app, 'ann')).notifications;
    expect(first.id).toBe(resolved.id);
    expect(reopened.header[1].text).toBe(' reopened the thread ');
    expect(reopened.headerTranslation.key).toBe('cord.thread_unresolve');
    // Both show the thread as it is now.
    expect(first.attachment.thread).toEqual(await getBody(app, threadPath(threadId)));
  });
});

describe('reaction notifications', () => {
  it('show a message’s reactions as one item of its author’s, named by the newest, until they are taken back', async () => {
    const app = await freshApp();
    const { threadId, messageId } = await newThread(app);
    const other = await postMessage(app, threadId, { authorID: 'ann', content: paragraph('second') });
    const path = messagePath(threadId, messageId);
    const react = async (userID: string, reaction: string, target = path) => {
      await putOk(app, target, { addReactions: [{ reaction, userID }] });
      await settled(system, app.id);
    };
    await react('bob', '👍');
    const [single] = (await list(app, 'ann')).notifications;
    expect(single).toMatchObject({
      senderUserIDs: ['bob'],
      header: [
        { type: 'user', userID: 'bob', user: BOB },
        { type: 'text', text: ' reacted 👍 to your message', bold: false },
      ],
      headerTranslation: { key: 'cord.reaction_single', parameters: { senders: [BOB], reaction: '👍' } },
      attachment: { type: 'message', messageID: messageId, threadID: threadId, message: await getBody(app, path) },
      text: 'Bob reacted 👍 to your message',
    });

    await react('erin', '🎉');
    const afterTwo = await list(app, 'ann');
    expect(afterTwo.pagination.total).toBe(1);
    const [double] = afterTwo.notifications;
    const rows = await storedNotifications(system, app.id);
    expect(double).toMatchObject({
      id: rows[1].id,
      senderUserIDs: ['erin', 'bob'],
      header: [
        { type: 'user', userID: 'erin', user: ERIN },
        { type: 'text', text: ' and ', bold: true },
        { type: 'user', userID: 'bob', user: BOB },
        { type: 'text', text: ' reacted 🎉 to your message', bold: false },
      ],
      headerTranslation: { key: 'cord.reaction_double', parameters: { senders: [ERIN, BOB], reaction: '🎉' } },
      timestamp: rows[1].createdAt.toISOString(),
      text: 'Erin and Bob reacted 🎉 to your message',
    });

    await react('fay', '❤️');
    await react('bob', '🎉', messagePath(threadId, other));
    const afterFour = await list(app, 'ann');
    expect(afterFour.pagination.total).toBe(2);
    const [onOther, overflow] = afterFour.notifications;
    expect(onOther.attachment.messageID).toBe(other);
    expect(overflow).toMatchObject({
      senderUserIDs: ['fay', 'erin', 'bob'],
      header: [
        { type: 'user', userID: 'fay', user: FAY },
        { type: 'text', text: ' and 2 others', bold: true },
        { type: 'text', text: ' reacted ❤️ to your message', bold: false },
      ],
      headerTranslation: { key: 'cord.reaction_overflow', parameters: { senders: [FAY, ERIN, BOB], reaction: '❤️', count: 2 } },
      text: 'Fay and 2 others reacted ❤️ to your message',
    });
    // One item per page: each once.
    const first = await list(app, 'ann', '?limit=1');
    const second = await list(app, 'ann', `?limit=1&token=${encodeURIComponent(first.pagination.token!)}`);
    expect([...first.notifications, ...second.notifications].map((item) => item.id)).toEqual([onOther.id, overflow.id]);
    expect(second.pagination.token).toBeNull();

    // fay takes hers back: the item is erin's and bob's again.
    await putOk(app, path, { removeReactions: [{ reaction: '❤️', userID: 'fay' }] });
    const [, again] = (await list(app, 'ann')).notifications;
    expect(again.senderUserIDs).toEqual(['erin', 'bob']);
    expect(again.header.at(-1).text).toBe(' reacted 🎉 to your message');
  });

  it('DELETE /v1/notifications/<ID> of a reactions item removes the whole item', async () => {
    const app = await freshApp();
    const { threadId, messageId } = await newThread(app);
    await putOk(app, messagePath(threadId, messageId), { addReactions: [{ reaction: '👍', userID: 'bob' }, { reaction: '👍', userID: 'erin' }] });
    await settled(system, app.id);
    const [item] = (await list(app, 'ann')).notifications;
    expect(item.senderUserIDs).toHaveLength(2);
    expect((await app.client.delete(`/v1/notifications/${encodeURIComponent(item.id)}`)).status).toBe(200);
    expect(await list(app, 'ann')).toEqual({ notifications: [], pagination: { token: null, total: 0 } });
    expect(await storedNotifications(system, app.id)).toEqual([]);
  });
});

describe('notifications gone with what they point to', () => {
  it('a reply or reaction is not listed while its message is soft-deleted; a thread action stays', async () => {
    const app = await freshApp();
    const { threadId, messageId } = await newThread(app, { content: mentioning('hi', 'erin') });
    const path = messagePath(threadId, messageId);
    await putOk(app, path, { addReactions: [{ reaction: '👍', userID: 'bob' }] });
    await putOk(app, threadPath(threadId), { resolved: true, userID: 'erin' });
    await settled(system, app.id);
    expect((await list(app, 'erin')).pagination.total).toBe(1);
    expect((await list(app, 'ann')).pagination.total).toBe(2);

    await putOk(app, path, { deleted: true });
    expect(await list(app, 'erin')).toEqual({ notifications: [], pagination: { token: null, total: 0 } });
    const ann = await list(app, 'ann');
    expect(ann.notifications.map((item) => item.attachment.type)).toEqual(['thread']);
    expect(ann.pagination.total).toBe(1);

    await putOk(app, path, { deleted: false });
    expect((await list(app, 'erin')).pagination.total).toBe(1);
    expect((await list(app, 'ann')).pagination.total).toBe(2);
  });

  it('a deleted message takes its notifications, a deleted thread all of its own', async () => {
    const app = await freshApp();
    const { threadId } = await newThread(app, { content: mentioning('hi', 'erin') });
    const reply = await postMessage(app, threadId, { authorID: 'bob', content: paragraph('reply') });
    await putOk(app, threadPath(threadId), { resolved: true, userID: 'bob' });
    await settled(system, app.id);
    expect((await list(app, 'erin')).pagination.total).toBe(3); // mention, bob's reply, bob's resolve
    expect((await app.client.delete(messagePath(threadId, reply))).status).toBe(200);
    expect((await list(app, 'erin')).notifications.map((item) => item.headerTranslation.key)).toEqual(['cord.thread_resolve', 'cord.reply_mention']);
    expect((await app.client.delete(threadPath(threadId))).status).toBe(200);
    expect(await list(app, 'erin')).toEqual({ notifications: [], pagination: { token: null, total: 0 } });
  });
});

describe('the internal API behind them', () => {
  // A relay's call has a short deadline and is retried; these calls are made once, so they wait
  // for the answer within the test's own time, also on a busy machine (5,000 notifications in one call).
  const internal = (service: 'notification' | 'conversation') =>
    createInternalClient({ baseUrl: system.serviceUrls[service], internalToken: system.env.INTERNAL_TOKEN, service, timeoutMs: 25_000 });

  /** A message of a new thread of a fresh application, and what an outbox entry about it names. */
  async function activityTarget() {
    const app = await freshApp();
    const { messageId } = await newThread(app);
    await settled(system, app.id);
    const messageRef = await messageRefOf(system, app.id, messageId);
    const { rows } = await system.sql.query(`SELECT thread_id::text AS ref FROM conversation.messages WHERE internal_id = $1`, [messageRef]);
    const activity = (recipientIds: string[]) => ({
      sourceId: randomUUID(),
      requestId: randomUUID(),
      linkBase: system.url,
      senderId: 'ann',
      messageRef,
      threadRef: rows[0].ref as string,
      replies: recipientIds.map((recipientId) => ({ recipientId, replyActions: [] })),
    });
    const contract = notificationInternal.createActivity;
    const create = async (activities: ReturnType<typeof activity>[]) =>
      contract.response.parse(
        await internal('notification').call(contract.method, contract.path, { applicationId: app.id, requestId: randomUUID(), body: { activities } }),
      ).created;
    return { app, activity, create };
  }

  it('creating notifications again for the same outbox entry creates nothing more', async () => {
    const { app, activity, create } = await activityTarget();
    const entry = activity(['bob']);
    expect(await create([entry])).toBe(1);
    expect(await create([entry])).toBe(0);
    await settled(system, app.id);
    expect((await storedNotifications(system, app.id)).map((row) => row.recipient)).toEqual(['bob']);
    expect((await list(app, 'bob')).pagination.total).toBe(1);
  });

  it('creates the notifications of a batch of entries in one call, each entry once', async () => {
    const { app, activity, create } = await activityTarget();
    const first = activity(['bob', 'fay']);
    const second = activity(['bob']);
    expect(await create([first])).toBe(2);
    // The relay retries a batch whose answer was lost together with entries it had not sent yet.
    expect(await create([first, second])).toBe(1);
    const { rows } = await system.sql.query(
      `SELECT source_id::text AS "sourceId", array_agg(recipient_id ORDER BY recipient_id) AS recipients
       FROM notification.notifications WHERE application_id = $1 GROUP BY source_id`,
      [app.id],
    );
    expect(new Map(rows.map((row) => [row.sourceId, row.recipients]))).toEqual(
      new Map([
        [first.sourceId, ['bob', 'fay']],
        [second.sourceId, ['bob']],
      ]),
    );
  });

  // 5,000 rows of 16 values are more parameters than PostgreSQL takes in one statement (65,535):
  // a batch of 100 messages to a group of 50 is as many.
  it('stores a batch larger than one statement takes (5,000 notifications)', async () => {
    const { app, activity, create } = await activityTarget();
    const recipients = Array.from({ length: 2500 }, (_, i) => `member-${i}`);
    expect(await create([activity(recipients), activity(recipients)])).toBe(5000);
    const { rows } = await system.sql.query(`SELECT count(*)::int AS n FROM notification.notifications WHERE application_id = $1`, [app.id]);
    expect(rows[0].n).toBe(5000);
  });

  it('refuses a body outside the contract with 400', async () => {
    const app = await freshApp();
    const headers = { 'x-collab-internal-token': system.env.INTERNAL_TOKEN, 'x-collab-application-id': app.id };
    const invalid = { sourceId: 'not-a-uuid', requestId: 'r', linkBase: '', senderId: 'ann', messageRef: '1', threadRef: '1' };
    const cases: [unknown, string][] = [
      [{ activities: [invalid] }, 'invalid_field'],
      [{ activities: [] }, 'invalid_field'],
      // One entry's body, as the endpoint took before it took batches.
      [invalid, 'missing_field'],
    ];
    for (const [body, error] of cases) {
      const response = await request(system.serviceUrls.notification, 'POST', notificationInternal.createActivity.path, { body, headers });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error, JSON.stringify(body)).toBe(error);
    }
  });
});

describe('tenant isolation', () => {
  it('another application sees none of them, for its own user of the same id', async () => {
    const app = await freshApp();
    const other = await freshApp();
    await newThread(app, { content: mentioning('hi', 'erin') });
    await settled(system, app.id);
    expect((await list(app, 'erin')).pagination.total).toBe(1);
    expect(await list(other, 'erin')).toEqual({ notifications: [], pagination: { token: null, total: 0 } });
    const [item] = (await list(app, 'erin')).notifications;
    expect((await other.client.delete(`/v1/notifications/${encodeURIComponent(item.id)}`)).status).toBe(404);
    expect((await list(app, 'erin')).pagination.total).toBe(1);
  });
});
