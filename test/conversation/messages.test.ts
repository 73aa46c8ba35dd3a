/**
 * Messages through the gateway: create, delete and the read endpoints of one thread.
 * Updates are in messages-update.test.ts, content nodes in message-content.test.ts and
 * GET /v1/messages in messages-list.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { messagePath, messagesPath, paragraph, threadPath, uploadFile } from '../support/activity.js';
import { createApplication, uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { seedTeam } from '../support/seed.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';
import { expectError } from '../support/expect.js';

let system: TestSystem;
let app: TestApplication;

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GENERATED_ID = /^cord:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const CREATE_UNEXPECTED_SUFFIX =
  'is not a valid field name for this request. Expected 2 required fields: authorID and content. 15 optional fields: id, type, createdTimestamp, iconURL, metadata, url, updatedTimestamp, deletedTimestamp, translationKey, extraClassnames, skipLinkPreviews, addReactions, addAttachments, subscribeToThread and createThread.';

/** Users: ann and bob are active members of `team`; carl exists outside it; dora is a deleted member. */
systemWithApplication('messages app', async (started) => {
  ({ system, app } = started);
  await seedTeam(app);
});

function createThreadParams(threadID: string, extra: Record<string, unknown> = {}) {
  return { groupID: 'team', location: { page: threadID }, url: `https://example.com/${threadID}`, name: `Thread ${threadID}`, ...extra };
}

/**
 * Posts `message` with createThread (`createThread` adds to or overrides its fields) to a new
 * thread ID: the answer is the error `status`/`error`, and no thread exists afterwards.
 */
async function expectNewThreadRefused(
  message: Record<string, unknown>,
  createThread: Record<string, unknown>,
  status: number,
  error: string,
  errorMessage?: string,
): Promise<void> {
  const threadID = uniqueId('thread');
  expectError(await post(threadID, { ...message, createThread: createThreadParams(threadID, createThread) }), status, error, errorMessage);
  expectError(await app.client.get(threadPath(threadID)), 404, 'thread_not_found');
}

/** A new thread in `team` whose first message is by ann; returns the thread ID and that message's ID. */
async function newThread(extra: Record<string, unknown> = {}): Promise<{ threadID: string; firstMessageID: string }> {
  const threadID = uniqueId('thread');
  const response = await app.client.post(messagesPath(threadID), {
    authorID: 'ann',
    content: paragraph('first'),
    createThread: createThreadParams(threadID),
    ...extra,
  });
  expect(response.body).toMatchObject({ success: true });
  expect(response.status).toBe(200);
  return { threadID, firstMessageID: response.body.messageID };
}

async function post(threadID: string, body: Record<string, unknown>, client = app.client): Promise<ApiResponse> {
  return client.post(messagesPath(threadID), body);
}

async function getMessage(threadID: string, messageID: string, client = app.client): Promise<ApiResponse> {
  return client.get(messagePath(threadID, messageID));
}



describe('POST /v1/threads/<ID>/messages', () => {
  it('answers exactly {success, message, messageID} with the given id', async () => {
    const { threadID } = await newThread();
    const id = uniqueId('msg');
    const response = await post(threadID, { id, authorID: 'ann', content: paragraph('hi') });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: 'Message created.', messageID: id });
    expect((await getMessage(threadID, id)).body).toMatchObject({ id, threadID, authorID: 'ann' });
  });

  it('generates a cord:<uuid> id when none is given, and the message is addressable by it', async () => {
    const { threadID, firstMessageID } = await newThread();
    expect(firstMessageID).toMatch(GENERATED_ID);
    const second = await post(threadID, { authorID: 'bob', content: paragraph('again') });
    expect(second.body.messageID).toMatch(GENERATED_ID);
    expect(second.body.messageID).not.toBe(firstMessageID);
    const fetched = await getMessage(threadID, second.body.messageID);
    expect(fetched.status).toBe(200);
    expect(fetched.body.id).toBe(second.body.messageID);
  });

  it('returns a message created with only the required fields with every default', async () => {
    const { threadID } = await newThread();
    const id = uniqueId('msg');
    const content = paragraph('Defaults only');
    await post(threadID, { id, authorID: 'bob', content });
    const response = await getMessage(threadID, id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id,
      authorID: 'bob',
      organizationID: 'team',
      groupID: 'team',
      threadID,
      content,
      plaintext: 'Defaults only',
      url: `https://example.com/${threadID}`,
      createdTimestamp: expect.stringMatching(ISO_TIMESTAMP),
      updatedTimestamp: null,
      deletedTimestamp: null,
      type: 'user_message',
      iconURL: null,
      translationKey: null,
      metadata: {},
      extraClassnames: null,
      skipLinkPreviews: false,
      attachments: [],
      reactions: [],
      seenBy: ['bob'],
    });
  });

  it('stores and returns every optional field', async () => {
    const { threadID, firstMessageID } = await newThread();
    const first = (await getMessage(threadID, firstMessageID)).body;
    const fileID = await uploadFile(app, 'ann', 'all.txt', 'abcdef');
    const id = uniqueId('msg');
    const content = [{ type: 'p', children: [{ text: 'All ', bold: true }, { text: 'fields' }] }];
    const response = await post(threadID, {
      id,
      authorID: 'ann',
      content,
      type: 'action_message',
      createdTimestamp: '2024-03-01T12:00:00.123+02:00',
      iconURL: 'https://example.com/icon.png',
      metadata: { kind: 'x', count: 2, flag: true },
      url: 'https://example.com/message',
      deletedTimestamp: '2024-03-02T10:00:00.000Z',
      updatedTimestamp: '2024-03-01T11:00:00Z',
      translationKey: 'custom.key',
      extraClassnames: 'one two',
      skipLinkPreviews: true,
      subscribeToThread: true,
      addReactions: [
        { reaction: '🎉', userID: 'ann' },
        { reaction: '👍', userID: 'bob', timestamp: '2024-03-01T10:05:00.000Z' },
      ],
      addAttachments: [{ type: 'file', id: fileID }],
    });
    expect(response.body).toEqual({ success: true, message: 'Message created.', messageID: id });
    const message = (await getMessage(threadID, id)).body;
    expect(message).toEqual({
      id,
      authorID: 'ann',
      organizationID: 'team',
      groupID: 'team',
      threadID,
      content,
      plaintext: 'All fields',
      url: 'https://example.com/message',
      createdTimestamp: '2024-03-01T10:00:00.123Z',
      updatedTimestamp: '2024-03-01T11:00:00.000Z',
      deletedTimestamp: '2024-03-02T10:00:00.000Z',
      type: 'action_message',
      iconURL: 'https://example.com/icon.png',
      translationKey: 'custom.key',
      metadata: { kind: 'x', count: 2, flag: true },
      extraClassnames: 'one two',
      skipLinkPreviews: true,
      attachments: [
        {
          type: 'file',
          id: `cord:${fileID}`,
          name: 'all.txt',
          url: expect.stringMatching(/^https?:\/\//),
          mimeType: 'text/plain',
          size: 6,
          uploadStatus: 'uploaded',
        },
      ],
      // Ordered by timestamp: the explicit 2024 one first, then the one defaulting to now.
      reactions: [
        { reaction: '👍', userID: 'bob', timestamp: '2024-03-01T10:05:00.000Z' },
        { reaction: '🎉', userID: 'ann', timestamp: expect.stringMatching(ISO_TIMESTAMP) },
      ],
      seenBy: expect.any(Array),
    });
    // A reaction without a timestamp gets "now": not earlier than a message created before it.
    expect(Date.parse(message.reactions[1].timestamp)).toBeGreaterThanOrEqual(Date.parse(first.createdTimestamp));
  });

  it('returns the thread URL as the message url when url is null or absent', async () => {
    const { threadID } = await newThread();
    const withNull = await post(threadID, { authorID: 'ann', content: paragraph('x'), url: null });
    expect(withNull.status).toBe(200);
    expect((await getMessage(threadID, withNull.body.messageID)).body.url).toBe(`https://example.com/${threadID}`);
    const given = await post(threadID, { authorID: 'ann', content: paragraph('x'), url: 'not even a url' });
    expect((await getMessage(threadID, given.body.messageID)).body.url).toBe('not even a url');
  });

  it('accepts nulls for the nullable optional fields', async () => {
    const { threadID } = await newThread();
    const response = await post(threadID, {
      authorID: 'ann',
      content: paragraph('nulls'),
      iconURL: null,
      deletedTimestamp: null,
      updatedTimestamp: null,
      translationKey: null,
      extraClassnames: null,
    });
    expect(response.status).toBe(200);
    expect((await getMessage(threadID, response.body.messageID)).body).toMatchObject({
      iconURL: null,
      deletedTimestamp: null,
      updatedTimestamp: null,
      translationKey: null,
      extraClassnames: null,
    });
  });

  it('validates iconURL as a URI', async () => {
    const { threadID } = await newThread();
    for (const iconURL of ['not a url', 'https://example.com/a b', 'https://example.com/é', '/relative/path', 12]) {
      expectError(
        await post(threadID, { authorID: 'ann', content: paragraph('x'), iconURL }),
        400,
        'invalid_field',
        /^Input type for iconURL is not valid, expected .*/,
      );
    }
    const mailto = await post(threadID, { authorID: 'ann', content: paragraph('x'), iconURL: 'mailto:someone@example.com' });
    expect(mailto.status).toBe(200);
    const encoded = await post(threadID, { authorID: 'ann', content: paragraph('x'), iconURL: 'https://example.com/a%20b' });
    expect((await getMessage(threadID, encoded.body.messageID)).body.iconURL).toBe('https://example.com/a%20b');
  });

  it('rejects wrongly typed optional fields with invalid_field naming them', async () => {
    const { threadID } = await newThread();
    const cases: [string, unknown][] = [
      ['type', 'system_message'],
      ['createdTimestamp', '2024-03-01 10:00:00'],
      ['createdTimestamp', null],
      ['metadata', { nested: { no: 1 } }],
      ['metadata', { value: null }],
      ['url', 5],
      ['deletedTimestamp', 1700000000000],
      ['translationKey', false],
      ['extraClassnames', ['a']],
      ['skipLinkPreviews', 'yes'],
      ['subscribeToThread', null],
      ['addReactions', { reaction: 'x', userID: 'ann' }],
      ['addAttachments', [{ type: 'link_preview', id: 'x' }]],
    ];
    for (const [field, value] of cases) {
      const response = await post(threadID, { authorID: 'ann', content: paragraph('x'), [field]: value });
      expectError(response, 400, 'invalid_field', new RegExp(`^Input type for ${field}(/0/type)? is not valid`));
    }
  });

  it('reports missing required fields with missing_field', async () => {
    const { threadID } = await newThread();
    expectError(await post(threadID, {}), 400, 'missing_field', 'Missing required fields: authorID and content.');
    expectError(await post(threadID, { authorID: 'ann' }), 400, 'missing_field', 'Missing required field: content.');
    expectError(
      await post(threadID, { authorID: 'ann', content: paragraph('x'), addReactions: [{ reaction: 'x' }] }),
      400,
      'missing_field',
      'Missing required field: addReactions/0/userID.',
    );
  });

  it('rejects an empty body and a body that is not an object with invalid_request', async () => {
    const { threadID } = await newThread();
    for (const rawBody of ['', '   ', '[]', 'null', '{"authorID": ']) {
      const token = await serverToken(app.id, app.secret);
      const response = await fetch(`${system.url}${messagesPath(threadID)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: rawBody,
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    }
  });

  it('rejects removeReactions, removeAttachments and deleted as unexpected fields', async () => {
    const { threadID } = await newThread();
    for (const [field, value] of [
      ['removeReactions', [{ reaction: 'x', userID: 'ann' }]],
      ['removeAttachments', []],
      ['deleted', true],
      ['plaintext', 'x'],
    ] as const) {
      const response = await post(threadID, { authorID: 'ann', content: paragraph('x'), [field]: value });
      expectError(response, 400, 'unexpected_field', `${field} ${CREATE_UNEXPECTED_SUFFIX}`);
    }
  });

  describe('subscribeToThread', () => {
    it('subscribes the author by default and with true, also when they had unsubscribed', async () => {
      const { threadID } = await newThread();
      await post(threadID, { authorID: 'bob', content: paragraph('x') });
      expect((await app.client.get(threadPath(threadID))).body.subscribers).toEqual(['ann', 'bob']);
      const removed = await app.client.put(threadPath(threadID), { removeSubscribers: ['bob'] });
      expect(removed.status).toBe(200);
      expect((await app.client.get(threadPath(threadID))).body.subscribers).toEqual(['ann']);
      await post(threadID, { authorID: 'bob', content: paragraph('x'), subscribeToThread: true });
      expect((await app.client.get(threadPath(threadID))).body.subscribers).toEqual(['ann', 'bob']);
    });

    it('leaves the subscription unchanged with false: an unsubscribed author stays unsubscribed, a subscribed one subscribed', async () => {
      const { threadID } = await newThread();
      await post(threadID, { authorID: 'bob', content: paragraph('x'), subscribeToThread: false });
      const thread = (await app.client.get(threadPath(threadID))).body;
      expect(thread.subscribers).toEqual(['ann']);
      // bob still took part: he is a participant who has seen the thread.
      expect(thread.participants).toEqual(
        expect.arrayContaining([expect.objectContaining({ userID: 'bob', lastSeenTimestamp: expect.stringMatching(ISO_TIMESTAMP) })]),
      );
      await post(threadID, { authorID: 'ann', content: paragraph('x'), subscribeToThread: false });
      expect((await app.client.get(threadPath(threadID))).body.subscribers).toEqual(['ann']);
    });

    it('does not subscribe the creator of a new thread with false', async () => {
      const threadID = uniqueId('thread');
      const response = await post(threadID, {
        authorID: 'ann',
        content: paragraph('x'),
        subscribeToThread: false,
        createThread: createThreadParams(threadID, { addSubscribers: ['bob'] }),
      });
      expect(response.status).toBe(200);
      expect((await app.client.get(threadPath(threadID))).body.subscribers).toEqual(['bob']);
    });
  });

  describe('createThread', () => {
    it('creates the missing thread from createThread with the path ID', async () => {
      const threadID = uniqueId('thread');
      const createThread = {
        groupID: 'team',
        location: { page: 'docs', section: 2 },
        url: 'https://example.com/docs',
        name: 'Docs thread',
        metadata: { topic: 'docs' },
        extraClassnames: 'thread-class',
      };
      const response = await post(threadID, { authorID: 'ann', content: paragraph('first'), createThread });
      expect(response.status).toBe(200);
      const thread = await app.client.get(threadPath(threadID));
      expect(thread.status).toBe(200);
      expect(thread.body).toMatchObject({
        id: threadID,
        ...createThread,
        total: 1,
        userMessages: 1,
        resolved: false,
      });
      expect((await getMessage(threadID, response.body.messageID)).body).toMatchObject({ threadID, groupID: 'team' });
    });

    it('accepts the deprecated organizationID instead of groupID', async () => {
      const threadID = uniqueId('thread');
      const { groupID: _unused, ...params } = createThreadParams(threadID);
      const response = await post(threadID, { authorID: 'ann', content: paragraph('x'), createThread: { ...params, organizationID: 'team' } });
      expect(response.status).toBe(200);
      expect((await app.client.get(threadPath(threadID))).body.groupID).toBe('team');
    });

    it('answers 404 thread_not_found for a missing thread without createThread, and creates nothing', async () => {
      const threadID = uniqueId('thread');
      const id = uniqueId('msg');
      expectError(await post(threadID, { id, authorID: 'ann', content: paragraph('x') }), 404, 'thread_not_found');
      expectError(await app.client.get(threadPath(threadID)), 404, 'thread_not_found');
      // The message ID is still free.
      const { threadID: other } = await newThread();
      expect((await post(other, { id, authorID: 'ann', content: paragraph('x') })).status).toBe(200);
    });

    it('reports missing createThread keys by path', async () => {
      const threadID = uniqueId('thread');
      expectError(
        await post(threadID, { authorID: 'ann', content: paragraph('x'), createThread: { groupID: 'team' } }),
        400,
        'missing_field',
        'Missing required fields: createThread.location, createThread.url and createThread.name.',
      );
      const { groupID: _unused, ...withoutGroup } = createThreadParams(threadID);
      expectError(
        await post(threadID, { authorID: 'ann', content: paragraph('x'), createThread: withoutGroup }),
        400,
        'missing_field',
        'Missing required field: createThread.groupID.',
      );
      expectError(await app.client.get(threadPath(threadID)), 404, 'thread_not_found');
    });

    it('rejects a cord: path ID for a new thread with invalid_field (threadID)', async () => {
      const threadID = 'cord:7a1c1d0e-8f57-4d43-9a55-2b0fa1a5e3c1';
      expectError(
        await post(threadID, { authorID: 'ann', content: paragraph('x'), createThread: createThreadParams('x') }),
        400,
        'invalid_field',
        'Input type for threadID is not valid, expected identifier.',
      );
    });

    it('ignores createThread when the thread exists, even when it names an unknown group or lacks groupID', async () => {
      const { threadID } = await newThread();
      const before = (await app.client.get(threadPath(threadID))).body;
      const unknownGroup = await post(threadID, {
        authorID: 'bob',
        content: paragraph('x'),
        createThread: { groupID: 'no-such-group', location: { other: 1 }, url: 'https://other', name: 'Other name' },
      });
      expect(unknownGroup.status).toBe(200);
      const noGroup = await post(threadID, {
        authorID: 'bob',
        content: paragraph('y'),
        createThread: { location: {}, url: 'u', name: 'n' },
      });
      expect(noGroup.status).toBe(200);
      const after = (await app.client.get(threadPath(threadID))).body;
      expect(after).toMatchObject({ groupID: 'team', name: before.name, url: before.url, location: before.location, total: 3 });
      expect((await getMessage(threadID, unknownGroup.body.messageID)).body.groupID).toBe('team');
    });

    it('still applies the schema to createThread when the thread exists', async () => {
      const { threadID } = await newThread();
      expectError(
        await post(threadID, { authorID: 'bob', content: paragraph('x'), createThread: { location: 'home', url: 'u', name: 'n' } }),
        400,
        'invalid_field',
        /^Input type for createThread\.location is not valid/,
      );
    });
  });

  describe('the order of checks: identifiers, thread, message id, author, then content', () => {
    it('rejects an id or authorID that is not an identifier with invalid_field', async () => {
      const { threadID } = await newThread();
      const cases: [Record<string, unknown>, string][] = [
        [{ id: 'cord:abc' }, 'id'],
        [{ id: '' }, 'id'],
        [{ id: 'x'.repeat(321) }, 'id'],
        [{ id: 'tab\there' }, 'id'],
        [{ id: 5 }, 'id'],
        [{ authorID: 'cord:ann' }, 'authorID'],
        [{ authorID: '' }, 'authorID'],
        [{ authorID: 7 }, 'authorID'],
      ];
      for (const [fields, field] of cases) {
        const response = await post(threadID, { authorID: 'ann', content: paragraph('x'), ...fields });
        expectError(response, 400, 'invalid_field', `Input type for ${field} is not valid, expected identifier.`);
      }
      // 320 code points (emoji count once) is still an identifier.
      const longest = '😀'.repeat(320);
      expect((await post(threadID, { id: longest, authorID: 'ann', content: paragraph('x') })).status).toBe(200);
    });

    it('checks identifiers before the thread (an invalid id on a missing thread is invalid_field)', async () => {
      expectError(
        await post(uniqueId('missing'), { id: 'cord:x', authorID: 'ann', content: paragraph('x') }),
        400,
        'invalid_field',
        'Input type for id is not valid, expected identifier.',
      );
    });

    it('checks the thread before the message ID (missing thread and taken id is thread_not_found)', async () => {
      const { threadID, firstMessageID } = await newThread({ id: uniqueId('taken') });
      expect(threadID).toBeTruthy();
      expectError(await post(uniqueId('missing'), { id: firstMessageID, authorID: 'ann', content: paragraph('x') }), 404, 'thread_not_found');
    });

    it('answers 409 message_already_exists for an id used by any message of the application', async () => {
      const { threadID, firstMessageID } = await newThread({ id: uniqueId('taken') });
      const { threadID: otherThread } = await newThread();
      expectError(await post(threadID, { id: firstMessageID, authorID: 'bob', content: paragraph('x') }), 409, 'message_already_exists');
      expectError(await post(otherThread, { id: firstMessageID, authorID: 'bob', content: paragraph('x') }), 409, 'message_already_exists');
      // Checked before the group: a taken id with an unknown createThread group is still 409.
      await expectNewThreadRefused({ id: firstMessageID, authorID: 'nobody', content: paragraph('x') }, { groupID: 'no-such-group' }, 409, 'message_already_exists');
      expect((await getMessage(threadID, firstMessageID)).body.content).toEqual(paragraph('first'));
    });

    it('answers 401 organization_not_found for an unknown createThread group, before checking the author', async () => {
      await expectNewThreadRefused({ authorID: 'nobody', content: paragraph('x') }, { groupID: 'no-such-group' }, 401, 'organization_not_found');
    });

    it('answers 401 user_not_found for an unknown author, before checking membership', async () => {
      const { threadID } = await newThread();
      expectError(await post(threadID, { authorID: 'nobody', content: paragraph('x') }), 401, 'user_not_found', 'Invalid message sender user id: nobody.');
      await expectNewThreadRefused({ authorID: 'nobody', content: paragraph('x') }, {}, 401, 'user_not_found');
    });

    it('answers 400 invalid_request when the author is not a member of the group, before checking content', async () => {
      const { threadID } = await newThread();
      const mentionOfNobody = [{ type: 'p', children: [{ type: 'mention', user: { id: 'nobody' }, children: [{ text: '@nobody' }] }] }];
      expectError(
        await post(threadID, { authorID: 'carl', content: mentionOfNobody }),
        400,
        'invalid_request',
        'message author is not a member of the organization the thread belongs to',
      );
      await expectNewThreadRefused({ authorID: 'carl', content: paragraph('x') }, {}, 400, 'invalid_request');
    });

    it('lets a member whose status is deleted post', async () => {
      const { threadID } = await newThread();
      expect((await post(threadID, { authorID: 'dora', content: paragraph('still here') })).status).toBe(200);
    });

    it('checks content before attachments and attachments before reactions', async () => {
      const { threadID } = await newThread();
      const mentionOfNobody = [{ type: 'p', children: [{ type: 'mention', user: { id: 'nobody' }, children: [{ text: '@nobody' }] }] }];
      const unknownFile = [{ type: 'file', id: '00000000-0000-4000-8000-000000000000' }];
      expectError(
        await post(threadID, { authorID: 'ann', content: mentionOfNobody, addAttachments: unknownFile }),
        400,
        'invalid_field',
        'content field is invalid: Could not find mentioned user with ID nobody',
      );
      expectError(
        await post(threadID, { authorID: 'ann', content: paragraph('x'), addAttachments: unknownFile, addReactions: [{ reaction: 'x', userID: 'nobody' }] }),
        404,
        'file_not_found',
      );
    });

    it('rejects attachments: the same file twice, an unknown file, a file owned by another user', async () => {
      const { threadID } = await newThread();
      const annFile = await uploadFile(app, 'ann');
      const bobFile = await uploadFile(app, 'bob');
      const id = uniqueId('msg');
      expectError(
        await post(threadID, { id, authorID: 'ann', content: paragraph('x'), addAttachments: [{ type: 'file', id: annFile }, { type: 'file', id: annFile }] }),
        400,
        'invalid_field',
        'Cannot attach the same file multiple times',
      );
      expectError(
        await post(threadID, { id, authorID: 'ann', content: paragraph('x'), addAttachments: [{ type: 'file', id: annFile }, { type: 'file', id: `cord:${annFile}` }] }),
        400,
        'invalid_field',
        'Cannot attach the same file multiple times',
      );
      expectError(
        await post(threadID, { id, authorID: 'ann', content: paragraph('x'), addAttachments: [{ type: 'file', id: annFile.toUpperCase() }, { type: 'file', id: annFile }] }),
        400,
        'invalid_field',
        'Cannot attach the same file multiple times',
      );
      for (const unknown of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        expectError(await post(threadID, { id, authorID: 'ann', content: paragraph('x'), addAttachments: [{ type: 'file', id: unknown }] }), 404, 'file_not_found');
      }
      expectError(
        await post(threadID, { id, authorID: 'ann', content: paragraph('x'), addAttachments: [{ type: 'file', id: bobFile }] }),
        403,
        'file_belongs_to_different_user',
      );
      expectError(await getMessage(threadID, id), 404, 'message_not_found');
      // A file of another application is unknown here.
      const other = await createApplication(system, 'other files app');
      await other.client.put('/v1/users/ann', { name: 'Ann elsewhere' });
      const foreignFile = await uploadFile(other, 'ann');
      expectError(await post(threadID, { id, authorID: 'ann', content: paragraph('x'), addAttachments: [{ type: 'file', id: foreignFile }] }), 404, 'file_not_found');
      // Attaching by the cord: form works too.
      const ok = await post(threadID, { id, authorID: 'ann', content: paragraph('x'), addAttachments: [{ type: 'file', id: `cord:${annFile}` }] });
      expect(ok.status).toBe(200);
      expect((await getMessage(threadID, id)).body.attachments).toEqual([expect.objectContaining({ id: `cord:${annFile}`, name: 'note.txt' })]);
    });
  });

  describe('addReactions', () => {
    it('answers 401 user_not_found for an unknown reaction user and writes nothing', async () => {
      const message = { id: uniqueId('msg'), authorID: 'ann', content: paragraph('x'), addReactions: [{ reaction: '👍', userID: 'nobody' }] };
      await expectNewThreadRefused(message, {}, 401, 'user_not_found', 'User with ID nobody does not exist.');
    });

    it('answers 401 user_not_in_organization for a reaction user outside the group or with status deleted, and writes nothing', async () => {
      const { threadID } = await newThread();
      const threadBefore = (await app.client.get(threadPath(threadID))).body;
      for (const userID of ['carl', 'dora']) {
        const id = uniqueId('msg');
        expectError(
          await post(threadID, {
            id,
            authorID: 'bob',
            content: paragraph('x'),
            addReactions: [
              { reaction: '👍', userID: 'ann' },
              { reaction: '👍', userID },
            ],
          }),
          401,
          'user_not_in_organization',
        );
        expectError(await getMessage(threadID, id), 404, 'message_not_found');
      }
      const threadAfter = (await app.client.get(threadPath(threadID))).body;
      expect(threadAfter.total).toBe(threadBefore.total);
      expect(threadAfter.subscribers).toEqual(threadBefore.subscribers);
      await expectNewThreadRefused({ authorID: 'ann', content: paragraph('x'), addReactions: [{ reaction: '👍', userID: 'carl' }] }, {}, 401, 'user_not_in_organization');
    });

    it('treats the same reaction twice in one request as one reaction', async () => {
      const { threadID } = await newThread();
      const response = await post(threadID, {
        authorID: 'ann',
        content: paragraph('x'),
        addReactions: [
          { reaction: '👍', userID: 'bob' },
          { reaction: '👍', userID: 'bob' },
          { reaction: '👍', userID: 'ann', timestamp: '2024-01-01T00:00:00.000Z' },
          { reaction: '👍', userID: 'ann', timestamp: '2024-01-02T00:00:00.000Z' },
        ],
      });
      expect(response.status).toBe(200);
      const { reactions } = (await getMessage(threadID, response.body.messageID)).body;
      expect(reactions).toEqual([
        { reaction: '👍', userID: 'ann', timestamp: '2024-01-02T00:00:00.000Z' },
        { reaction: '👍', userID: 'bob', timestamp: expect.stringMatching(ISO_TIMESTAMP) },
      ]);
    });

    it('rejects reactions that are empty or longer than 127 characters with invalid_field', async () => {
      const { threadID } = await newThread();
      for (const reaction of ['', 'a'.repeat(128), '👍'.repeat(64)]) {
        const response = await post(threadID, { authorID: 'ann', content: paragraph('x'), addReactions: [{ reaction, userID: 'bob' }] });
        expectError(response, 400, 'invalid_field');
      }
      const longest = 'a'.repeat(127);
      const ok = await post(threadID, { authorID: 'ann', content: paragraph('x'), addReactions: [{ reaction: longest, userID: 'bob' }] });
      expect(ok.status).toBe(200);
      expect((await getMessage(threadID, ok.body.messageID)).body.reactions).toEqual([expect.objectContaining({ reaction: longest })]);
    });

    it('rejects unexpected keys in reaction items', async () => {
      const { threadID } = await newThread();
      const response = await post(threadID, { authorID: 'ann', content: paragraph('x'), addReactions: [{ reaction: 'x', userID: 'bob', extra: 1 }] });
      expectError(response, 400, 'unexpected_field', /^addReactions\/0\/extra is not a valid field name/);
    });
  });

  it('reopens a resolved thread with an action message just before the new message', async () => {
    const { threadID } = await newThread();
    expect((await app.client.put(threadPath(threadID), { resolved: true })).status).toBe(200);
    const response = await post(threadID, { authorID: 'bob', content: paragraph('reopen') });
    expect(response.status).toBe(200);
    const thread = (await app.client.get(threadPath(threadID))).body;
    expect(thread).toMatchObject({ resolved: false, resolvedTimestamp: null, total: 3, actionMessages: 1 });
    const messages = (await app.client.get(`${messagesPath(threadID)}?sortDirection=ascending`)).body;
    expect(messages.map((message: { type: string }) => message.type)).toEqual(['user_message', 'action_message', 'user_message']);
    expect(messages[1]).toMatchObject({ authorID: 'bob', translationKey: 'cord.thread_unresolved', plaintext: '@Bob reopened this thread' });
    expect(Date.parse(messages[1].createdTimestamp)).toBeLessThan(Date.parse(messages[2].createdTimestamp));
  });
});

describe('DELETE /v1/threads/<tID>/messages/<mID>', () => {
  it('deletes permanently with the exact message; the thread stays, even empty', async () => {
    const { threadID, firstMessageID } = await newThread();
    const response = await app.client.delete(messagePath(threadID, firstMessageID));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: `You successfully deleted message ${firstMessageID}` });
    expectError(await getMessage(threadID, firstMessageID), 404, 'message_not_found');
    const thread = await app.client.get(threadPath(threadID));
    expect(thread.status).toBe(200);
    expect(thread.body.total).toBe(0);
    expect((await app.client.get(messagesPath(threadID))).body).toEqual([]);
    expectError(await app.client.delete(messagePath(threadID, firstMessageID)), 404, 'message_not_found');
  });

  it('deletes only that message, and its id becomes free again', async () => {
    const { threadID, firstMessageID } = await newThread({ id: uniqueId('msg') });
    const second = await post(threadID, { authorID: 'bob', content: paragraph('second') });
    await app.client.delete(messagePath(threadID, firstMessageID));
    expect((await app.client.get(messagesPath(threadID))).body.map((m: { id: string }) => m.id)).toEqual([second.body.messageID]);
    expect((await post(threadID, { id: firstMessageID, authorID: 'ann', content: paragraph('again') })).status).toBe(200);
  });

  it('answers thread_not_found for an unknown thread and message_not_found for a message of another thread', async () => {
    const { threadID, firstMessageID } = await newThread();
    const { threadID: otherThread } = await newThread();
    expectError(await app.client.delete(messagePath(uniqueId('missing'), firstMessageID)), 404, 'thread_not_found');
    expectError(await app.client.delete(messagePath(otherThread, firstMessageID)), 404, 'message_not_found');
    expectError(await app.client.delete(messagePath(threadID, 'no-such-message')), 404, 'message_not_found');
    expect((await getMessage(threadID, firstMessageID)).status).toBe(200);
  });
});

describe('reading messages', () => {
  it('GET one message answers thread_not_found / message_not_found, also for a message of another thread', async () => {
    const { threadID, firstMessageID } = await newThread();
    const { threadID: otherThread } = await newThread();
    expect((await getMessage(threadID, firstMessageID)).status).toBe(200);
    expectError(await getMessage(uniqueId('missing'), firstMessageID), 404, 'thread_not_found');
    expectError(await getMessage(otherThread, firstMessageID), 404, 'message_not_found');
    expectError(await getMessage(threadID, 'no-such-message'), 404, 'message_not_found');
    expectError(await getMessage(threadID, 'cord:00000000-0000-4000-8000-000000000000'), 404, 'message_not_found');
  });

  it('GET one message rejects a path ID that is not an identifier with invalid_request', async () => {
    const { threadID } = await newThread();
    expectError(await getMessage(threadID, 'cord:not-a-uuid'), 400, 'invalid_request');
  });

  it('lists a thread newest first by default and oldest first on request', async () => {
    const { threadID } = await newThread({ createdTimestamp: '2024-05-01T00:00:02.000Z' });
    const early = await post(threadID, { authorID: 'bob', content: paragraph('early'), createdTimestamp: '2024-05-01T00:00:01.000Z' });
    const late = await post(threadID, { authorID: 'bob', content: paragraph('late'), createdTimestamp: '2024-05-01T00:00:03.000Z' });
    const texts = (response: ApiResponse) => response.body.map((message: { plaintext: string }) => message.plaintext);
    const byDefault = await app.client.get(messagesPath(threadID));
    expect(byDefault.status).toBe(200);
    expect(texts(byDefault)).toEqual(['late', 'first', 'early']);
    expect(texts(await app.client.get(`${messagesPath(threadID)}?sortDirection=descending`))).toEqual(['late', 'first', 'early']);
    expect(texts(await app.client.get(`${messagesPath(threadID)}?sortDirection=ascending`))).toEqual(['early', 'first', 'late']);
    expect(texts(await app.client.get(`${messagesPath(threadID)}?sortDirection=ASCENDING`))).toEqual(['early', 'first', 'late']);
    // Items are full message objects, equal to the single-message read.
    const single = (await getMessage(threadID, late.body.messageID)).body;
    expect(byDefault.body[0]).toEqual(single);
    expect(early.status).toBe(200);
  });

  it('rejects another sortDirection with invalid_request and the exact message', async () => {
    const { threadID } = await newThread();
    for (const value of ['up', 'asc', '1']) {
      expectError(
        await app.client.get(`${messagesPath(threadID)}?sortDirection=${value}`),
        400,
        'invalid_request',
        "sortDirection value is invalid: must be 'ascending' or 'descending'",
      );
    }
  });

  it('lists an unknown thread as 404 thread_not_found and an empty thread as []', async () => {
    expectError(await app.client.get(messagesPath(uniqueId('missing'))), 404, 'thread_not_found');
    const { threadID, firstMessageID } = await newThread();
    await app.client.delete(messagePath(threadID, firstMessageID));
    const response = await app.client.get(messagesPath(threadID));
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('lists soft-deleted and action messages with their full content', async () => {
    const { threadID } = await newThread();
    const content = paragraph('gone but kept');
    const deleted = await post(threadID, { authorID: 'bob', content, deletedTimestamp: '2024-06-01T00:00:00.000Z', type: 'action_message' });
    const listed = (await app.client.get(messagesPath(threadID))).body;
    expect(listed).toHaveLength(2);
    expect(listed.find((message: { id: string }) => message.id === deleted.body.messageID)).toMatchObject({
      content,
      plaintext: 'gone but kept',
      deletedTimestamp: '2024-06-01T00:00:00.000Z',
      type: 'action_message',
    });
  });

  describe('seenBy', () => {
    it('contains the author of a new message, and others once they have seen the thread', async () => {
      const { threadID, firstMessageID } = await newThread();
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual(['ann']);
      const seen = await app.client.put(threadPath(threadID), { seenByUsers: [{ userID: 'bob', seen: true }] });
      expect(seen.status).toBe(200);
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual(['ann', 'bob']);
      // bob posts: he has seen everything, ann has not seen his message.
      const reply = await post(threadID, { authorID: 'bob', content: paragraph('reply') });
      expect((await getMessage(threadID, reply.body.messageID)).body.seenBy).toEqual(['bob']);
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual(['ann', 'bob']);
      await app.client.put(threadPath(threadID), { seenByUsers: [{ userID: 'bob', seen: false }] });
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual(['ann']);
    });

    it('drops everybody from seenBy when the content is edited', async () => {
      const { threadID, firstMessageID } = await newThread();
      await app.client.put(threadPath(threadID), { seenByUsers: [{ userID: 'bob', seen: true }] });
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual(['ann', 'bob']);
      const edited = await app.client.put(messagePath(threadID, firstMessageID), { content: paragraph('edited') });
      expect(edited.status).toBe(200);
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual([]);
      // A message posted after the edit is seen by its author, up to and including the edited one.
      await post(threadID, { authorID: 'bob', content: paragraph('later') });
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual(['bob']);
    });

    it('puts users back into seenBy of an edited message once they see the thread again', async () => {
      const { threadID, firstMessageID } = await newThread();
      const edited = await app.client.put(messagePath(threadID, firstMessageID), { content: paragraph('edited') });
      expect(edited.status).toBe(200);
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual([]);
      const seen = await app.client.put(threadPath(threadID), { seenByUsers: [{ userID: 'bob', seen: true }] });
      expect(seen.status).toBe(200);
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual(['bob']);
    });

    it('is not changed by metadata edits or reactions', async () => {
      const { threadID, firstMessageID } = await newThread();
      await app.client.put(messagePath(threadID, firstMessageID), { metadata: { a: 1 }, addReactions: [{ reaction: 'x', userID: 'bob' }] });
      expect((await getMessage(threadID, firstMessageID)).body.seenBy).toEqual(['ann']);
    });
  });
});

describe('tenant isolation', () => {
  it("keeps another application from reading, updating or deleting a message by its IDs; it may reuse them", async () => {
    const { threadID, firstMessageID } = await newThread({ id: uniqueId('shared-id') });
    const other = await createApplication(system, 'other app');
    await other.client.put('/v1/users/ann', { name: 'Other Ann' });
    await other.client.put('/v1/groups/team', { name: 'Other team', members: ['ann'] });

    expectError(await getMessage(threadID, firstMessageID, other.client), 404, 'thread_not_found');
    expectError(await other.client.get(messagesPath(threadID)), 404, 'thread_not_found');
    expectError(await other.client.put(messagePath(threadID, firstMessageID), { content: paragraph('hijack') }), 404, 'thread_not_found');
    expectError(await other.client.delete(messagePath(threadID, firstMessageID)), 404, 'thread_not_found');
    expectError(await post(threadID, { authorID: 'ann', content: paragraph('x') }, other.client), 404, 'thread_not_found');
    expect((await other.client.get('/v1/messages')).body).toEqual({ messages: [], pagination: { token: null, total: 0 } });

    // The same thread ID and message ID are free in the other application.
    const mine = await post(threadID, { id: firstMessageID, authorID: 'ann', content: paragraph('mine'), createThread: createThreadParams(threadID) }, other.client);
    expect(mine.body).toEqual({ success: true, message: 'Message created.', messageID: firstMessageID });
    expect((await getMessage(threadID, firstMessageID, other.client)).body.plaintext).toBe('mine');
    expect((await getMessage(threadID, firstMessageID)).body.plaintext).toBe('first');
    await other.client.delete(messagePath(threadID, firstMessageID));
    expect((await getMessage(threadID, firstMessageID)).status).toBe(200);
  });
});

describe('concurrency', () => {
  it('lets five concurrent first messages with createThread all succeed in one thread', async () => {
    const threadID = uniqueId('race');
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, index) =>
        post(threadID, { authorID: index % 2 ? 'bob' : 'ann', content: paragraph(`racer ${index}`), createThread: createThreadParams(threadID) }),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    const ids = responses.map((response) => response.body.messageID);
    expect(new Set(ids).size).toBe(5);
    const thread = (await app.client.get(threadPath(threadID))).body;
    expect(thread).toMatchObject({ id: threadID, total: 5, userMessages: 5 });
    const listed = (await app.client.get(messagesPath(threadID))).body.map((message: { id: string }) => message.id);
    expect([...listed].sort()).toEqual([...ids].sort());
    const threads = (await app.client.get('/v1/threads')).body as { id: string }[];
    expect(threads.filter((candidate) => candidate.id === threadID)).toHaveLength(1);
  });

  it('lets exactly one of concurrent creates with the same message ID succeed; the others get 409', async () => {
    const { threadID } = await newThread();
    const id = uniqueId('dup');
    const responses = await Promise.all(
      ['one', 'two', 'three', 'four', 'five'].map((text, index) =>
        post(threadID, { id, authorID: index % 2 ? 'bob' : 'ann', content: paragraph(text) }),
      ),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409, 409, 409, 409]);
    for (const loser of responses.filter((response) => response.status === 409)) expect(loser.body.error).toBe('message_already_exists');
    const winner = responses.findIndex((response) => response.status === 200);
    expect((await getMessage(threadID, id)).body.plaintext).toBe(['one', 'two', 'three', 'four', 'five'][winner]);
    expect((await app.client.get(threadPath(threadID))).body.total).toBe(2);
  });
});
