/**
 * The conversation service's internal API for the notification service (@collab/shared
 * `conversationInternal`): the state of messages (there, soft-deleted, their reactions) and their
 * GET message and GET thread objects, by internal reference, for the asking application only.
 */
import { randomUUID } from 'node:crypto';
import { conversationDirectory, conversationInternal, createInternalClient } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { createApplication, request, uniqueId, type TestApplication } from '../support/client.js';
import { seedTeam } from '../support/seed.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('internal views', async (started) => {
  ({ system, app } = started);
  await seedTeam(app);
});

const conversation = () =>
  conversationDirectory(createInternalClient({ baseUrl: system.serviceUrls.conversation, internalToken: system.env.INTERNAL_TOKEN, service: 'conversation' }));

/** A new thread with one message of ann's; returns their ids and internal references. */
async function thread(extra: Record<string, unknown> = {}) {
  const threadId = uniqueId('thread');
  const response = await app.client.post(`/v1/threads/${threadId}/messages`, {
    authorID: 'ann',
    content: [{ type: 'p', children: [{ text: 'hello' }] }],
    createThread: { groupID: 'team', location: { page: threadId }, url: `https://example.com/${threadId}`, name: `Thread ${threadId}` },
    ...extra,
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const messageId = response.body.messageID as string;
  const { rows } = await system.sql.query(
    `SELECT m.internal_id::text AS "messageRef", t.internal_id::text AS "threadRef"
     FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
     WHERE m.application_id = $1 AND m.external_id = $2`,
    [app.id, messageId],
  );
  return { threadId, messageId, messagePath: `/v1/threads/${threadId}/messages/${encodeURIComponent(messageId)}`, ...rows[0] };
}

describe('views', () => {
  it('answers the GET message and GET thread objects of the references', async () => {
    const { threadId, messageId, messagePath, messageRef, threadRef } = await thread();
    const views = await conversation().views(app.id, { messageRefs: [messageRef], threadRefs: [threadRef], linkBase: 'https://api.example.com' }, randomUUID());
    expect(views).toEqual({
      messages: [{ ref: messageRef, id: messageId, threadID: threadId, view: (await app.client.get(messagePath)).body }],
      threads: [{ ref: threadRef, name: `Thread ${threadId}`, view: (await app.client.get(`/v1/threads/${threadId}`)).body }],
    });
  });

  it('leaves out what is gone or names nothing', async () => {
    const { messagePath, messageRef, threadRef } = await thread();
    expect((await app.client.delete(messagePath)).status).toBe(200);
    const views = await conversation().views(app.id, { messageRefs: [messageRef, '0', 'x'], threadRefs: ['99999999'], linkBase: '' }, randomUUID());
    expect(views).toEqual({ messages: [], threads: [] });
    expect((await conversation().views(app.id, { messageRefs: [], threadRefs: [threadRef], linkBase: '' }, randomUUID())).threads).toHaveLength(1);
  });
});

describe('message states', () => {
  it('tell whether each message is soft-deleted, with who reacted with what; a deleted thread takes its messages', async () => {
    const kept = await thread({ addReactions: [{ reaction: '👍', userID: 'bob' }] });
    const softDeleted = await thread({ deletedTimestamp: new Date().toISOString() });
    const gone = await thread();
    expect((await app.client.delete(`/v1/threads/${gone.threadId}`)).status).toBe(200);
    const states = await conversation().messageStates(app.id, [kept.messageRef, softDeleted.messageRef, gone.messageRef], randomUUID());
    expect(states.sort((a, b) => a.ref.localeCompare(b.ref))).toEqual(
      [
        { ref: kept.messageRef, deleted: false, reactions: [{ userID: 'bob', reaction: '👍' }] },
        { ref: softDeleted.messageRef, deleted: true, reactions: [] },
      ].sort((a, b) => a.ref.localeCompare(b.ref)),
    );
  });
});

describe('the contract', () => {
  it('gives another application nothing of this one’s', async () => {
    const other = await createApplication(system, 'internal views, other');
    const { messageRef, threadRef } = await thread();
    expect(await conversation().views(other.id, { messageRefs: [messageRef], threadRefs: [threadRef], linkBase: '' }, randomUUID())).toEqual({
      messages: [],
      threads: [],
    });
    expect(await conversation().messageStates(other.id, [messageRef], randomUUID())).toEqual([]);
  });

  it('refuses a body outside the request schema with 400, and a call without the application', async () => {
    const headers = { 'x-collab-internal-token': system.env.INTERNAL_TOKEN, 'x-collab-application-id': app.id };
    const valid = [
      [conversationInternal.views.path, { messageRefs: [], threadRefs: [], linkBase: '' }],
      [conversationInternal.messageStates.path, { messageRefs: [] }],
    ] as const;
    for (const [path, body] of valid) {
      const invalid = await request(system.serviceUrls.conversation, 'POST', path, { body: { ...body, messageRefs: 'not a list' }, headers });
      expect(invalid.status, path).toBe(400);
      expect(invalid.body.error).toBe('invalid_field');
      const anonymous = await request(system.serviceUrls.conversation, 'POST', path, {
        body,
        headers: { 'x-collab-internal-token': system.env.INTERNAL_TOKEN },
      });
      expect(anonymous.status, path).toBe(400);
      expect((await request(system.serviceUrls.conversation, 'POST', path, { body, headers })).status, path).toBe(200);
    }
  });
});
