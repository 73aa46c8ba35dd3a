/**
 * PUT /v1/threads/<tID>/messages/<mID> through the gateway: which fields change, the order of
 * checks and their error codes, and how an edit changes a message's state.
 */
import { describe, expect, it } from 'vitest';
import { messagePath, messagesPath, paragraph, threadPath, uploadFile } from '../support/activity.js';
import { uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { seedTeam } from '../support/seed.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';
import { expectError } from '../support/expect.js';

let system: TestSystem;
let app: TestApplication;

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UPDATE_UNEXPECTED_SUFFIX =
  'is not a valid field name for this request. Expected 18 optional fields: id, authorID, content, type, createdTimestamp, iconURL, metadata, url, updatedTimestamp, deletedTimestamp, translationKey, extraClassnames, skipLinkPreviews, addReactions, addAttachments, removeReactions, removeAttachments and deleted.';

/** ann and bob are active members of `team`; carl exists outside it; dora is a deleted member. */
systemWithApplication('message updates app', async (started) => {
  ({ system, app } = started);
  await seedTeam(app);
});

/** A new thread in `team` with one message by ann (extra fields go into that message). */
async function newMessage(extra: Record<string, unknown> = {}): Promise<{ threadID: string; messageID: string }> {
  const threadID = uniqueId('thread');
  const response = await app.client.post(messagesPath(threadID), {
    authorID: 'ann',
    content: paragraph('original'),
    createThread: { groupID: 'team', location: { page: threadID }, url: `https://example.com/${threadID}`, name: 'Thread' },
    ...extra,
  });
  expect(response.body).toMatchObject({ success: true });
  expect(response.status).toBe(200);
  return { threadID, messageID: response.body.messageID };
}

const put = (threadID: string, messageID: string, body: unknown) => app.client.put(messagePath(threadID, messageID), body);
const get = async (threadID: string, messageID: string) => {
  const response = await app.client.get(messagePath(threadID, messageID));
  expect(response.status).toBe(200);
  return response.body;
};



function expectUpdated(response: ApiResponse, messageID: string) {
  expect(response.body).toEqual({ success: true, message: `You successfully updated message ${messageID}` });
  expect(response.status).toBe(200);
}

describe('PUT /v1/threads/<tID>/messages/<mID>', () => {
  it('answers exactly {success, message} and changes nothing for {}', async () => {
    const { threadID, messageID } = await newMessage();
    const before = await get(threadID, messageID);
    expectUpdated(await put(threadID, messageID, {}), messageID);
    expect(await get(threadID, messageID)).toEqual(before);
  });

  it('sets every scalar field at once', async () => {
    const { threadID, messageID } = await newMessage();
    const content = [{ type: 'quote', children: [{ text: 'new ' }, { text: 'words', italic: true }] }];
    expectUpdated(
      await put(threadID, messageID, {
        type: 'action_message',
        createdTimestamp: '2023-01-01T00:00:00.001Z',
        iconURL: 'https://example.com/icon.svg',
        metadata: { replaced: true },
        url: 'https://example.com/message',
        content,
        updatedTimestamp: '2023-01-02T00:00:00Z',
        deletedTimestamp: '2023-01-03T00:00:00+01:00',
        translationKey: 'key.updated',
        extraClassnames: 'a b',
        skipLinkPreviews: true,
      }),
      messageID,
    );
    expect(await get(threadID, messageID)).toEqual({
      id: messageID,
      authorID: 'ann',
      organizationID: 'team',
      groupID: 'team',
      threadID,
      content,
      plaintext: 'new words',
      url: 'https://example.com/message',
      createdTimestamp: '2023-01-01T00:00:00.001Z',
      updatedTimestamp: '2023-01-02T00:00:00.000Z',
      deletedTimestamp: '2023-01-02T23:00:00.000Z',
      type: 'action_message',
      iconURL: 'https://example.com/icon.svg',
      translationKey: 'key.updated',
      metadata: { replaced: true },
      extraClassnames: 'a b',
      skipLinkPreviews: true,
      attachments: [],
      reactions: [],
      seenBy: expect.any(Array),
    });
  });

  it('changes only the fields that are sent; metadata is replaced, not merged', async () => {
    const { threadID, messageID } = await newMessage({ metadata: { a: 1, b: 'two' }, translationKey: 'k', iconURL: 'https://example.com/i' });
    const before = await get(threadID, messageID);
    expectUpdated(await put(threadID, messageID, { metadata: { c: false } }), messageID);
    expect(await get(threadID, messageID)).toEqual({ ...before, metadata: { c: false } });
    expectUpdated(await put(threadID, messageID, { type: 'action_message' }), messageID);
    expect(await get(threadID, messageID)).toEqual({ ...before, metadata: { c: false }, type: 'action_message' });
    expectUpdated(await put(threadID, messageID, { skipLinkPreviews: true, metadata: {} }), messageID);
    expect(await get(threadID, messageID)).toEqual({ ...before, metadata: {}, type: 'action_message', skipLinkPreviews: true });
  });

  it('clears the nullable fields with null; url falls back to the thread URL; extraClassnames null is ignored', async () => {
    const { threadID, messageID } = await newMessage({
      iconURL: 'https://example.com/i',
      url: 'https://example.com/m',
      translationKey: 'k',
      extraClassnames: 'keep me',
      updatedTimestamp: '2024-01-01T00:00:00.000Z',
    });
    expectUpdated(
      await put(threadID, messageID, { iconURL: null, url: null, translationKey: null, extraClassnames: null, updatedTimestamp: null }),
      messageID,
    );
    expect(await get(threadID, messageID)).toMatchObject({
      iconURL: null,
      url: `https://example.com/${threadID}`,
      translationKey: null,
      extraClassnames: 'keep me',
      updatedTimestamp: null,
    });
  });

  it('rejects invalid values with invalid_field naming the field', async () => {
    const { threadID, messageID } = await newMessage();
    const cases: [string, unknown][] = [
      ['createdTimestamp', null],
      ['createdTimestamp', 'yesterday'],
      ['iconURL', 'no scheme'],
      ['type', 'other'],
      ['metadata', []],
      ['deleted', 'true'],
      ['authorID', 3],
      ['id', null],
      ['removeAttachments', [{ type: 'screenshot', id: 'x' }]],
    ];
    for (const [field, value] of cases) {
      expectError(await put(threadID, messageID, { [field]: value }), 400, 'invalid_field', new RegExp(`^Input type for ${field}(/0/type)? is not valid`));
    }
  });

  it('rejects createThread and subscribeToThread as unexpected fields, and an empty body as invalid_request', async () => {
    const { threadID, messageID } = await newMessage();
    for (const field of ['createThread', 'subscribeToThread', 'plaintext', 'seenBy']) {
      expectError(await put(threadID, messageID, { [field]: true }), 400, 'unexpected_field', `${field} ${UPDATE_UNEXPECTED_SUFFIX}`);
    }
    const response = await fetch(`${system.url}${messagePath(threadID, messageID)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}`, 'content-type': 'application/json' },
      body: '',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('answers thread_not_found for an unknown thread and message_not_found for an unknown message or one of another thread', async () => {
    const { threadID, messageID } = await newMessage();
    const { threadID: otherThread } = await newMessage();
    expectError(await put(uniqueId('missing'), messageID, { metadata: { x: 1 } }), 404, 'thread_not_found');
    expectError(await put(uniqueId('missing'), 'no-such-message', { metadata: { x: 1 } }), 404, 'thread_not_found');
    expectError(await put(threadID, 'no-such-message', { metadata: { x: 1 } }), 404, 'message_not_found');
    expectError(await put(otherThread, messageID, { metadata: { x: 1 } }), 404, 'message_not_found');
    expect((await get(threadID, messageID)).metadata).toEqual({});
  });

  describe('content', () => {
    it('replaces content and plaintext, and marks the message edited with updatedTimestamp', async () => {
      const { threadID, messageID } = await newMessage();
      const before = await get(threadID, messageID);
      expectUpdated(await put(threadID, messageID, { content: paragraph('edited text') }), messageID);
      const after = await get(threadID, messageID);
      expect(after.content).toEqual(paragraph('edited text'));
      expect(after.plaintext).toBe('edited text');
      expect(after.updatedTimestamp).toMatch(ISO_TIMESTAMP);
      expect(Date.parse(after.updatedTimestamp)).toBeGreaterThanOrEqual(Date.parse(before.createdTimestamp));
      expect(after.createdTimestamp).toBe(before.createdTimestamp);
    });

    it('uses the given updatedTimestamp (or null) instead of now', async () => {
      const { threadID, messageID } = await newMessage();
      expectUpdated(await put(threadID, messageID, { content: paragraph('a'), updatedTimestamp: '2022-02-02T02:02:02.002Z' }), messageID);
      expect((await get(threadID, messageID)).updatedTimestamp).toBe('2022-02-02T02:02:02.002Z');
      expectUpdated(await put(threadID, messageID, { content: paragraph('b'), updatedTimestamp: null }), messageID);
      expect((await get(threadID, messageID)).updatedTimestamp).toBeNull();
    });

    it('does not mark the message edited when the same content is sent again, whatever the key order', async () => {
      const content = [
        { type: 'p', class: 'c', children: [{ text: 'Hi ', bold: true }, { type: 'link', url: 'https://x', children: [{ text: 'x' }] }] },
        { type: 'number_bullet', bulletNumber: 1, indent: 0, children: [{ type: 'p', children: [{ text: 'one' }] }] },
      ];
      const { threadID, messageID } = await newMessage({ content });
      const reordered = [
        { children: [{ bold: true, text: 'Hi ' }, { children: [{ text: 'x' }], url: 'https://x', type: 'link' }], class: 'c', type: 'p' },
        { indent: 0, children: [{ children: [{ text: 'one' }], type: 'p' }], bulletNumber: 1, type: 'number_bullet' },
      ];
      expectUpdated(await put(threadID, messageID, { content }), messageID);
      expectUpdated(await put(threadID, messageID, { content: reordered }), messageID);
      expect((await get(threadID, messageID)).updatedTimestamp).toBeNull();
    });

    it('rejects invalid content with invalid_field and keeps the old content', async () => {
      const { threadID, messageID } = await newMessage();
      expectError(await put(threadID, messageID, { content: [{ text: 'bare text at top level' }] }), 400, 'invalid_field');
      expectError(
        await put(threadID, messageID, { content: [{ type: 'p', children: [{ type: 'mention', user: { id: 'nobody' }, children: [{ text: '@x' }] }] }] }),
        400,
        'invalid_field',
        'content field is invalid: Could not find mentioned user with ID nobody',
      );
      const message = await get(threadID, messageID);
      expect(message.content).toEqual(paragraph('original'));
      expect(message.updatedTimestamp).toBeNull();
    });

    it('records new mentions: the mentioned group member is subscribed and listed as mentioned', async () => {
      const { threadID, messageID } = await newMessage();
      const mention = [{ type: 'p', children: [{ text: 'hey ' }, { type: 'mention', user: { id: 'bob' }, children: [{ text: '@Bob' }] }] }];
      expectUpdated(await put(threadID, messageID, { content: mention }), messageID);
      const thread = (await app.client.get(threadPath(threadID))).body;
      expect(thread.mentioned).toEqual(['bob']);
      expect(thread.subscribers).toEqual(['ann', 'bob']);
      expect((await get(threadID, messageID)).plaintext).toBe('hey @Bob');
    });
  });

  describe('soft delete (deleted / deletedTimestamp)', () => {
    it('deleted true sets deletedTimestamp to now; deleted false clears it', async () => {
      const { threadID, messageID } = await newMessage();
      const before = await get(threadID, messageID);
      expectUpdated(await put(threadID, messageID, { deleted: true }), messageID);
      const deleted = await get(threadID, messageID);
      expect(deleted.deletedTimestamp).toMatch(ISO_TIMESTAMP);
      expect(Date.parse(deleted.deletedTimestamp)).toBeGreaterThanOrEqual(Date.parse(before.createdTimestamp));
      expect((await app.client.get(threadPath(threadID))).body).toMatchObject({ total: 1, userMessages: 0, deletedMessages: 1 });
      expectUpdated(await put(threadID, messageID, { deleted: false }), messageID);
      expect((await get(threadID, messageID)).deletedTimestamp).toBeNull();
      expect((await app.client.get(threadPath(threadID))).body).toMatchObject({ total: 1, userMessages: 1, deletedMessages: 0 });
    });

    it('deletedTimestamp sets and null clears it', async () => {
      const { threadID, messageID } = await newMessage();
      expectUpdated(await put(threadID, messageID, { deletedTimestamp: '2024-07-07T07:07:07.777Z' }), messageID);
      expect((await get(threadID, messageID)).deletedTimestamp).toBe('2024-07-07T07:07:07.777Z');
      expectUpdated(await put(threadID, messageID, { deletedTimestamp: null }), messageID);
      expect((await get(threadID, messageID)).deletedTimestamp).toBeNull();
    });

    it('lets deletedTimestamp win over deleted', async () => {
      const { threadID, messageID } = await newMessage();
      expectUpdated(await put(threadID, messageID, { deleted: false, deletedTimestamp: '2024-07-07T07:07:07.000Z' }), messageID);
      expect((await get(threadID, messageID)).deletedTimestamp).toBe('2024-07-07T07:07:07.000Z');
      expectUpdated(await put(threadID, messageID, { deleted: true, deletedTimestamp: null }), messageID);
      expect((await get(threadID, messageID)).deletedTimestamp).toBeNull();
    });

    it('keeps returning a soft-deleted message with its full content from every read', async () => {
      const content = [{ type: 'p', children: [{ text: 'still ' }, { type: 'mention', user: { id: 'bob' }, children: [{ text: '@Bob' }] }] }];
      const { threadID, messageID } = await newMessage({ content, metadata: { keep: 'yes' } });
      expectUpdated(await put(threadID, messageID, { deleted: true }), messageID);
      const single = await get(threadID, messageID);
      expect(single).toMatchObject({ content, plaintext: 'still @Bob', metadata: { keep: 'yes' }, deletedTimestamp: expect.stringMatching(ISO_TIMESTAMP) });
      expect((await app.client.get(messagesPath(threadID))).body).toEqual([single]);
      const listed = (await app.client.get('/v1/messages')).body.messages.find((message: { id: string }) => message.id === messageID);
      expect(listed).toEqual(single);
      // The content is not changed by soft deletion, so it does not show as edited.
      expect(single.updatedTimestamp).toBeNull();
    });
  });

  describe('id', () => {
    it('renames the message: the new ID addresses it, the old one is gone, reactions and attachments follow', async () => {
      const fileID = await uploadFile(app, 'ann');
      const { threadID, messageID } = await newMessage({
        id: uniqueId('old'),
        addReactions: [{ reaction: '👍', userID: 'bob' }],
        addAttachments: [{ type: 'file', id: fileID }],
      });
      const newID = uniqueId('new');
      expectUpdated(await put(threadID, messageID, { id: newID }), messageID);
      expectError(await app.client.get(messagePath(threadID, messageID)), 404, 'message_not_found');
      const renamed = await get(threadID, newID);
      expect(renamed.id).toBe(newID);
      expect(renamed.reactions).toEqual([expect.objectContaining({ reaction: '👍', userID: 'bob' })]);
      expect(renamed.attachments).toEqual([expect.objectContaining({ id: `cord:${fileID}` })]);
      // The old ID is free again.
      const reuse = await app.client.post(messagesPath(threadID), { id: messageID, authorID: 'bob', content: paragraph('reuse') });
      expect(reuse.status).toBe(200);
    });

    it('renames a generated cord: ID to a customer ID', async () => {
      const { threadID, messageID } = await newMessage();
      expect(messageID.startsWith('cord:')).toBe(true);
      const newID = uniqueId('named');
      expectUpdated(await put(threadID, messageID, { id: newID }), messageID);
      expect((await get(threadID, newID)).id).toBe(newID);
    });

    it('accepts the current ID as a no-op', async () => {
      const { threadID, messageID } = await newMessage({ id: uniqueId('same') });
      expectUpdated(await put(threadID, messageID, { id: messageID }), messageID);
      expect((await get(threadID, messageID)).id).toBe(messageID);
    });

    it('answers 409 message_already_exists when the new ID is taken anywhere in the application', async () => {
      const { threadID, messageID } = await newMessage({ id: uniqueId('a') });
      const { messageID: otherID } = await newMessage({ id: uniqueId('b') });
      expectError(await put(threadID, messageID, { id: otherID }), 409, 'message_already_exists');
      // Checked before the author: a taken ID with an unknown author is still 409.
      expectError(await put(threadID, messageID, { id: otherID, authorID: 'nobody' }), 409, 'message_already_exists');
      expect((await get(threadID, messageID)).id).toBe(messageID);
    });

    it('rejects a new ID that is not an identifier with invalid_field', async () => {
      const { threadID, messageID } = await newMessage();
      for (const id of ['cord:abc', '', 'x'.repeat(321), 'bell\u0007']) {
        expectError(await put(threadID, messageID, { id }), 400, 'invalid_field', 'Input type for id is not valid, expected identifier.');
      }
    });
  });

  describe('authorID', () => {
    it('re-attributes the message, also to a user outside the group', async () => {
      const { threadID, messageID } = await newMessage();
      expectUpdated(await put(threadID, messageID, { authorID: 'bob' }), messageID);
      expect((await get(threadID, messageID)).authorID).toBe('bob');
      expectUpdated(await put(threadID, messageID, { authorID: 'carl' }), messageID);
      expect((await get(threadID, messageID)).authorID).toBe('carl');
    });

    it('answers 401 user_not_found for an unknown author, before checking content', async () => {
      const { threadID, messageID } = await newMessage();
      expectError(await put(threadID, messageID, { authorID: 'nobody' }), 401, 'user_not_found', 'Invalid message author id: nobody.');
      expectError(await put(threadID, messageID, { authorID: 'nobody', content: [{ text: 'bare' }] }), 401, 'user_not_found');
      expect((await get(threadID, messageID)).authorID).toBe('ann');
    });
  });

  describe('reactions', () => {
    it('adds and removes reactions; removing one that does not exist is no error', async () => {
      const { threadID, messageID } = await newMessage();
      expectUpdated(
        await put(threadID, messageID, {
          addReactions: [
            { reaction: '👍', userID: 'bob', timestamp: '2024-01-01T00:00:01.000Z' },
            { reaction: '🎉', userID: 'ann', timestamp: '2024-01-01T00:00:02.000Z' },
          ],
        }),
        messageID,
      );
      expect((await get(threadID, messageID)).reactions).toEqual([
        { reaction: '👍', userID: 'bob', timestamp: '2024-01-01T00:00:01.000Z' },
        { reaction: '🎉', userID: 'ann', timestamp: '2024-01-01T00:00:02.000Z' },
      ]);
      expectUpdated(
        await put(threadID, messageID, {
          removeReactions: [
            { reaction: '👍', userID: 'bob' },
            { reaction: '❤️', userID: 'bob' },
            { reaction: '🎉', userID: 'bob' },
          ],
        }),
        messageID,
      );
      expect((await get(threadID, messageID)).reactions).toEqual([{ reaction: '🎉', userID: 'ann', timestamp: '2024-01-01T00:00:02.000Z' }]);
    });

    it('adds a reaction with the current time by default, without marking the message edited', async () => {
      const { threadID, messageID } = await newMessage();
      const before = await get(threadID, messageID);
      expectUpdated(await put(threadID, messageID, { addReactions: [{ reaction: '👀', userID: 'bob' }] }), messageID);
      const after = await get(threadID, messageID);
      expect(after.reactions).toEqual([{ reaction: '👀', userID: 'bob', timestamp: expect.stringMatching(ISO_TIMESTAMP) }]);
      expect(Date.parse(after.reactions[0].timestamp)).toBeGreaterThanOrEqual(Date.parse(before.createdTimestamp));
      expect(after.updatedTimestamp).toBeNull();
    });

    it('keeps an existing reaction as it is when added again without a timestamp, and moves it with one', async () => {
      const { threadID, messageID } = await newMessage({ addReactions: [{ reaction: '👍', userID: 'bob', timestamp: '2024-01-01T00:00:00.000Z' }] });
      expectUpdated(await put(threadID, messageID, { addReactions: [{ reaction: '👍', userID: 'bob' }] }), messageID);
      expect((await get(threadID, messageID)).reactions).toEqual([{ reaction: '👍', userID: 'bob', timestamp: '2024-01-01T00:00:00.000Z' }]);
      expectUpdated(await put(threadID, messageID, { addReactions: [{ reaction: '👍', userID: 'bob', timestamp: '2024-02-02T00:00:00.000Z' }] }), messageID);
      expect((await get(threadID, messageID)).reactions).toEqual([{ reaction: '👍', userID: 'bob', timestamp: '2024-02-02T00:00:00.000Z' }]);
    });

    it('rejects adding and removing the same reaction in one request with invalid_field, changing nothing', async () => {
      const { threadID, messageID } = await newMessage();
      expectError(
        await put(threadID, messageID, {
          metadata: { changed: true },
          addReactions: [{ reaction: '👍', userID: 'bob' }],
          removeReactions: [{ reaction: '👍', userID: 'bob' }],
        }),
        400,
        'invalid_field',
        'Adding and removing the same reaction is invalid.',
      );
      const message = await get(threadID, messageID);
      expect(message.reactions).toEqual([]);
      expect(message.metadata).toEqual({});
      // The same reaction by different users, or different reactions by one user, are no conflict.
      expectUpdated(
        await put(threadID, messageID, { addReactions: [{ reaction: '👍', userID: 'bob' }], removeReactions: [{ reaction: '👍', userID: 'ann' }, { reaction: '👎', userID: 'bob' }] }),
        messageID,
      );
    });

    it('checks reaction users in both lists: unknown → 401 user_not_found, not an active member → 401 user_not_in_organization', async () => {
      const { threadID, messageID } = await newMessage();
      const cases: [Record<string, unknown>, number, string][] = [
        [{ addReactions: [{ reaction: 'x', userID: 'nobody' }] }, 401, 'user_not_found'],
        [{ removeReactions: [{ reaction: 'x', userID: 'nobody' }] }, 401, 'user_not_found'],
        [{ addReactions: [{ reaction: 'x', userID: 'carl' }] }, 401, 'user_not_in_organization'],
        [{ addReactions: [{ reaction: 'x', userID: 'dora' }] }, 401, 'user_not_in_organization'],
        [{ removeReactions: [{ reaction: 'x', userID: 'carl' }] }, 401, 'user_not_in_organization'],
      ];
      for (const [body, status, error] of cases) {
        expectError(await put(threadID, messageID, { ...body, metadata: { changed: true } }), status, error);
      }
      const message = await get(threadID, messageID);
      expect(message.reactions).toEqual([]);
      expect(message.metadata).toEqual({});
    });

    it('rejects empty and over-long reactions with invalid_field', async () => {
      const { threadID, messageID } = await newMessage();
      for (const reaction of ['', 'b'.repeat(128), '🙂'.repeat(64)]) {
        expectError(await put(threadID, messageID, { addReactions: [{ reaction, userID: 'bob' }] }), 400, 'invalid_field');
      }
      expect((await get(threadID, messageID)).reactions).toEqual([]);
    });
  });

  describe('attachments', () => {
    it('attaches and detaches files; removal works with the cord: ID and the bare UUID', async () => {
      const first = await uploadFile(app, 'ann', 'first.txt', 'one');
      const second = await uploadFile(app, 'ann', 'second.txt', 'three');
      const { threadID, messageID } = await newMessage();
      expectUpdated(await put(threadID, messageID, { addAttachments: [{ type: 'file', id: first }, { type: 'file', id: `cord:${second}` }] }), messageID);
      expect((await get(threadID, messageID)).attachments).toEqual([
        { type: 'file', id: `cord:${first}`, name: 'first.txt', url: expect.any(String), mimeType: 'text/plain', size: 3, uploadStatus: 'uploaded' },
        { type: 'file', id: `cord:${second}`, name: 'second.txt', url: expect.any(String), mimeType: 'text/plain', size: 5, uploadStatus: 'uploaded' },
      ]);
      expectUpdated(await put(threadID, messageID, { removeAttachments: [{ type: 'file', id: `cord:${first}` }] }), messageID);
      expect((await get(threadID, messageID)).attachments.map((item: { id: string }) => item.id)).toEqual([`cord:${second}`]);
      expectUpdated(await put(threadID, messageID, { removeAttachments: [{ type: 'file', id: second }] }), messageID);
      expect((await get(threadID, messageID)).attachments).toEqual([]);
      // The file itself still exists and can be attached again.
      expectUpdated(await put(threadID, messageID, { addAttachments: [{ type: 'file', id: first }] }), messageID);
      expect((await get(threadID, messageID)).attachments).toHaveLength(1);
    });

    it('treats removing a file or link preview that is not attached as no error', async () => {
      const fileID = await uploadFile(app, 'ann');
      const { threadID, messageID } = await newMessage();
      expectUpdated(
        await put(threadID, messageID, {
          removeAttachments: [
            { type: 'file', id: fileID },
            { type: 'file', id: 'not-a-uuid' },
            { type: 'file', id: '00000000-0000-4000-8000-000000000000' },
            { type: 'link_preview', id: 'no-such-preview' },
          ],
        }),
        messageID,
      );
      expect((await get(threadID, messageID)).attachments).toEqual([]);
    });

    it('rejects adding and removing the same file in one request with invalid_field', async () => {
      const fileID = await uploadFile(app, 'ann');
      const { threadID, messageID } = await newMessage();
      for (const [added, removed] of [
        [fileID, fileID],
        [`cord:${fileID}`, fileID],
        [fileID, `cord:${fileID}`],
      ]) {
        expectError(
          await put(threadID, messageID, { addAttachments: [{ type: 'file', id: added }], removeAttachments: [{ type: 'file', id: removed }] }),
          400,
          'invalid_field',
          'Adding and removing the same attachment is invalid.',
        );
      }
      expect((await get(threadID, messageID)).attachments).toEqual([]);
    });

    it('rejects a file that is already attached, or sent twice, with invalid_field', async () => {
      const fileID = await uploadFile(app, 'ann');
      const { threadID, messageID } = await newMessage({ addAttachments: [{ type: 'file', id: fileID }] });
      expectError(await put(threadID, messageID, { addAttachments: [{ type: 'file', id: fileID }] }), 400, 'invalid_field', 'Cannot attach an already-attached file');
      expectError(await put(threadID, messageID, { addAttachments: [{ type: 'file', id: `cord:${fileID}` }] }), 400, 'invalid_field', 'Cannot attach an already-attached file');
      const other = await uploadFile(app, 'ann');
      expectError(
        await put(threadID, messageID, { addAttachments: [{ type: 'file', id: other }, { type: 'file', id: other }] }),
        400,
        'invalid_field',
        'Cannot attach the same file multiple times',
      );
      expect((await get(threadID, messageID)).attachments).toHaveLength(1);
    });

    it('answers 404 file_not_found for an unknown file and 403 for a file of another user, changing nothing', async () => {
      const bobFile = await uploadFile(app, 'bob');
      const { threadID, messageID } = await newMessage();
      expectError(await put(threadID, messageID, { metadata: { x: 1 }, addAttachments: [{ type: 'file', id: '00000000-0000-4000-8000-000000000000' }] }), 404, 'file_not_found');
      expectError(await put(threadID, messageID, { metadata: { x: 1 }, addAttachments: [{ type: 'file', id: 'garbage' }] }), 404, 'file_not_found');
      expectError(await put(threadID, messageID, { metadata: { x: 1 }, addAttachments: [{ type: 'file', id: bobFile }] }), 403, 'file_belongs_to_different_user');
      const message = await get(threadID, messageID);
      expect(message.attachments).toEqual([]);
      expect(message.metadata).toEqual({});
    });

    it('checks file ownership against the new author when authorID changes in the same request', async () => {
      const bobFile = await uploadFile(app, 'bob');
      const { threadID, messageID } = await newMessage();
      expectUpdated(await put(threadID, messageID, { authorID: 'bob', addAttachments: [{ type: 'file', id: bobFile }] }), messageID);
      expect(await get(threadID, messageID)).toMatchObject({ authorID: 'bob', attachments: [expect.objectContaining({ id: `cord:${bobFile}` })] });
    });
  });

  describe('order of checks', () => {
    it('checks content before reactions, reactions before attachments', async () => {
      const { threadID, messageID } = await newMessage();
      expectError(
        await put(threadID, messageID, { content: [{ text: 'bare' }], addReactions: [{ reaction: 'x', userID: 'nobody' }] }),
        400,
        'invalid_field',
        /^content field is invalid/,
      );
      expectError(
        await put(threadID, messageID, {
          addReactions: [{ reaction: 'x', userID: 'nobody' }],
          addAttachments: [{ type: 'file', id: '00000000-0000-4000-8000-000000000000' }],
        }),
        401,
        'user_not_found',
      );
      const fileID = await uploadFile(app, 'ann');
      expectError(
        await put(threadID, messageID, {
          addReactions: [{ reaction: 'x', userID: 'bob' }],
          removeReactions: [{ reaction: 'x', userID: 'bob' }],
          addAttachments: [{ type: 'file', id: fileID }],
          removeAttachments: [{ type: 'file', id: fileID }],
        }),
        400,
        'invalid_field',
        'Adding and removing the same reaction is invalid.',
      );
    });
  });
});
