/**
 * PUT /v1/threads/<ID> through the gateway: resolving and reopening and every other updatable field.
 */
import { describe, expect, it } from 'vitest';
import { request, uniqueId, type ApiClient, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;
let api: ApiClient;

const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];
const path = (threadId: string) => `/v1/threads/${encodeURIComponent(threadId)}`;
const creation = (extra: Record<string, unknown> = {}) => ({
  groupID: 'team',
  location: { page: 'update-test' },
  url: 'https://example.com/update',
  name: 'Update me',
  ...extra,
});

async function post(threadId: string, body: Record<string, unknown>) {
  const response = await api.post(`${path(threadId)}/messages`, body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.messageID as string;
}

/** A new thread with one message by ann; returns its id. */
async function newThread(extra: Record<string, unknown> = {}, message: Record<string, unknown> = {}) {
  const id = uniqueId('thread');
  await post(id, { authorID: 'ann', content: paragraph('first'), createThread: creation(extra), ...message });
  return id;
}

async function getThread(threadId: string) {
  const response = await api.get(path(threadId));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function messagesOf(threadId: string) {
  const response = await api.get(`${path(threadId)}/messages?sortDirection=ascending`);
  expect(response.status).toBe(200);
  return response.body as any[];
}

async function update(threadId: string, body: unknown) {
  return api.put(path(threadId), body);
}

async function updateOk(threadId: string, body: unknown) {
  const response = await update(threadId, body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body).toEqual({ success: true, message: `You successfully updated thread ${threadId}` });
}

/** Runs `action` and returns the window [before, after] in ms around it. */
async function windowAround(action: () => Promise<unknown>) {
  const before = Date.now();
  await action();
  return { before, after: Date.now() };
}

systemWithApplication('test app', async (started) => {
  ({ system, app } = started);
  api = app.client;
  for (const [id, body] of [
    ['ann', { name: 'Ann' }],
    ['bob', { name: 'Bob', shortName: 'B' }],
    ['cat', { name: 'Cat' }],
    ['out', { name: 'Outsider' }],
  ] as const)
    expect((await api.put(`/v1/users/${id}`, body)).status).toBe(200);
  expect((await api.put('/v1/groups/team', { name: 'Team', members: ['ann', 'bob', 'cat'] })).status).toBe(200);
  expect((await api.put('/v1/groups/elsewhere', { name: 'Elsewhere', members: ['ann'] })).status).toBe(200);
  expect((await api.put('/v1/groups/third', { name: 'Third', members: ['ann'] })).status).toBe(200);
});

describe('resolving and reopening', () => {
  it('resolves with resolved: true, stamping the current time', async () => {
    const id = await newThread();
    const { before, after } = await windowAround(() => updateOk(id, { resolved: true }));
    const thread = await getThread(id);
    expect(thread.resolved).toBe(true);
    const stamped = Date.parse(thread.resolvedTimestamp);
    expect(stamped).toBeGreaterThanOrEqual(before);
    expect(stamped).toBeLessThanOrEqual(after);
  });

  it('reopens with resolved: false', async () => {
    const id = await newThread();
    await updateOk(id, { resolved: true });
    await updateOk(id, { resolved: false });
    expect(await getThread(id)).toMatchObject({ resolved: false, resolvedTimestamp: null });
  });

  it('resolves at the given resolvedTimestamp and reopens with resolvedTimestamp: null', async () => {
    const id = await newThread();
    await updateOk(id, { resolvedTimestamp: '2024-03-01T10:00:00.123Z' });
    expect(await getThread(id)).toMatchObject({ resolved: true, resolvedTimestamp: '2024-03-01T10:00:00.123Z' });
    await updateOk(id, { resolvedTimestamp: null });
    expect(await getThread(id)).toMatchObject({ resolved: false, resolvedTimestamp: null });
  });

  it('accepts resolvedTimestamp with an offset and returns it in UTC', async () => {
    const id = await newThread();
    await updateOk(id, { resolvedTimestamp: '2024-03-01T12:00:00+02:00' });
    expect((await getThread(id)).resolvedTimestamp).toBe('2024-03-01T10:00:00.000Z');
  });

  it('lets resolvedTimestamp win over resolved', async () => {
    const id = await newThread();
    await updateOk(id, { resolved: false, resolvedTimestamp: '2024-04-01T00:00:00.000Z' });
    expect(await getThread(id)).toMatchObject({ resolved: true, resolvedTimestamp: '2024-04-01T00:00:00.000Z' });
    await updateOk(id, { resolved: true, resolvedTimestamp: null });
    expect(await getThread(id)).toMatchObject({ resolved: false, resolvedTimestamp: null });
  });

  it('refreshes the timestamp when an already resolved thread is resolved again', async () => {
    const id = await newThread();
    await updateOk(id, { resolvedTimestamp: '2020-01-01T00:00:00.000Z' });
    const { before } = await windowAround(() => updateOk(id, { resolved: true }));
    expect(Date.parse((await getThread(id)).resolvedTimestamp)).toBeGreaterThanOrEqual(before);
  });

  it('adds a "resolved this thread" action message by userID when the thread is resolved', async () => {
    const id = await newThread();
    const { before, after } = await windowAround(() => updateOk(id, { resolved: true, userID: 'bob' }));
    const messages = await messagesOf(id);
    expect(messages).toHaveLength(2);
    const action = messages[1];
    expect(action).toMatchObject({
      type: 'action_message',
      authorID: 'bob',
      threadID: id,
      translationKey: 'cord.thread_resolved',
      deletedTimestamp: null,
    });
    expect(action.content[0].children[0]).toMatchObject({ type: 'mention', user: { id: 'bob' } });
    expect(action.plaintext).toMatch(/^@\S+ resolved this thread$/);
    expect(Date.parse(action.createdTimestamp)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(action.createdTimestamp)).toBeLessThanOrEqual(after);
    expect(await getThread(id)).toMatchObject({ resolved: true, total: 2, userMessages: 1, actionMessages: 1, actionMessageRepliers: ['bob'] });
  });

  it('adds a "reopened this thread" action message by userID when the thread is reopened', async () => {
    const id = await newThread();
    await updateOk(id, { resolved: true });
    await updateOk(id, { resolved: false, userID: 'cat' });
    const messages = await messagesOf(id);
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({ type: 'action_message', authorID: 'cat', translationKey: 'cord.thread_unresolved' });
    expect(messages[1].content[0].children[0]).toMatchObject({ type: 'mention', user: { id: 'cat' } });
    expect(messages[1].plaintext).toMatch(/^@\S+ reopened this thread$/);
    expect(await getThread(id)).toMatchObject({ resolved: false, actionMessages: 1 });
  });

  it('adds an action message for a flip through resolvedTimestamp too', async () => {
    const id = await newThread();
    await updateOk(id, { resolvedTimestamp: '2024-05-05T05:05:05.000Z', userID: 'bob' });
    const messages = await messagesOf(id);
    expect(messages.map((message) => message.translationKey)).toEqual([null, 'cord.thread_resolved']);
  });

  it('adds no action message without userID', async () => {
    const id = await newThread();
    await updateOk(id, { resolved: true });
    await updateOk(id, { resolved: false });
    expect(await messagesOf(id)).toHaveLength(1);
    expect(await getThread(id)).toMatchObject({ total: 1, actionMessages: 0 });
  });

  it('adds no action message when the state does not flip, and does not check userID then', async () => {
    const id = await newThread();
    await updateOk(id, { resolved: false, userID: 'bob' });
    await updateOk(id, { resolvedTimestamp: null, userID: 'nobody-at-all' });
    await updateOk(id, { resolved: true });
    await updateOk(id, { resolved: true, userID: 'bob' });
    expect(await messagesOf(id)).toHaveLength(1);
  });

  it('answers 401 user_not_found for an unknown userID on a flip, and changes nothing', async () => {
    const id = await newThread();
    const response = await update(id, { resolved: true, userID: 'nobody-at-all', name: 'Should not stick' });
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('user_not_found');
    expect(await getThread(id)).toMatchObject({ resolved: false, name: 'Update me', total: 1 });
  });

  it('reopens a resolved thread when a message is posted, with a reopen action message by the poster 1 ms earlier', async () => {
    const id = await newThread();
    await updateOk(id, { resolved: true });
    const messageID = await post(id, { authorID: 'bob', content: paragraph('still broken'), createdTimestamp: '2030-01-01T00:00:00.000Z' });
    const thread = await getThread(id);
    expect(thread).toMatchObject({ resolved: false, resolvedTimestamp: null, total: 3, userMessages: 2, actionMessages: 1 });
    expect(thread.actionMessageRepliers).toEqual(['bob']);
    const messages = await messagesOf(id);
    const reopen = messages.find((message) => message.type === 'action_message');
    const posted = messages.find((message) => message.id === messageID);
    expect(reopen).toMatchObject({ authorID: 'bob', translationKey: 'cord.thread_unresolved', createdTimestamp: '2029-12-31T23:59:59.999Z' });
    expect(reopen.plaintext).toMatch(/^@\S+ reopened this thread$/);
    expect(posted.createdTimestamp).toBe('2030-01-01T00:00:00.000Z');
  });

  it('places the reopen action message 1 ms before a message posted without a timestamp', async () => {
    const id = await newThread();
    await updateOk(id, { resolved: true });
    const messageID = await post(id, { authorID: 'cat', content: paragraph('again') });
    const messages = await messagesOf(id);
    const reopen = messages.find((message) => message.type === 'action_message');
    const posted = messages.find((message) => message.id === messageID);
    expect(Date.parse(posted.createdTimestamp) - Date.parse(reopen.createdTimestamp)).toBe(1);
    expect(reopen.authorID).toBe('cat');
  });

  it('adds one action message when several requests resolve the thread at once', async () => {
    const id = await newThread();
    const responses = await Promise.all(['ann', 'bob', 'cat', 'ann', 'bob'].map((userID) => update(id, { resolved: true, userID })));
    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    const actions = (await messagesOf(id)).filter((message) => message.type === 'action_message');
    expect(actions).toHaveLength(1);
    expect(await getThread(id)).toMatchObject({ resolved: true, actionMessages: 1 });
  });

  it('adds no action message when a message is posted to an unresolved thread', async () => {
    const id = await newThread();
    await post(id, { authorID: 'bob', content: paragraph('reply') });
    expect((await messagesOf(id)).map((message) => message.type)).toEqual(['user_message', 'user_message']);
  });
});

describe('updating other fields', () => {
  it('replaces metadata as a whole', async () => {
    const id = await newThread({ metadata: { a: 1, b: 'two' } });
    await updateOk(id, { metadata: { c: true } });
    expect((await getThread(id)).metadata).toEqual({ c: true });
    await updateOk(id, { metadata: {} });
    expect((await getThread(id)).metadata).toEqual({});
  });

  it('answers 400 invalid_field for metadata with a nested or null value, and keeps the old metadata', async () => {
    const id = await newThread({ metadata: { keep: 'me' } });
    for (const metadata of [{ nested: { x: 1 } }, { list: [1] }, { empty: null }, 'flat?']) {
      const response = await update(id, { metadata });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_field');
      expect(response.body.message).toContain('metadata');
    }
    expect((await getThread(id)).metadata).toEqual({ keep: 'me' });
  });

  it('replaces name, url and location', async () => {
    const id = await newThread();
    await updateOk(id, { name: 'Renamed', url: 'https://example.com/moved', location: { page: 'new', n: 2 } });
    expect(await getThread(id)).toMatchObject({ name: 'Renamed', url: 'https://example.com/moved', location: { page: 'new', n: 2 } });
  });

  it('moves the thread and its messages to another group', async () => {
    const id = await newThread();
    await updateOk(id, { groupID: 'elsewhere' });
    expect(await getThread(id)).toMatchObject({ groupID: 'elsewhere', organizationID: 'elsewhere' });
    const [message] = await messagesOf(id);
    expect(message.groupID).toBe('elsewhere');
  });

  it('keeps a move made by one request while other requests update other fields', async () => {
    const id = await newThread();
    const responses = await Promise.all([
      ...Array.from({ length: 5 }, (_, n) => update(id, { name: `Name ${n}` })),
      update(id, { groupID: 'elsewhere' }),
      ...Array.from({ length: 5 }, (_, n) => update(id, { metadata: { n } })),
    ]);
    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect((await getThread(id)).groupID).toBe('elsewhere');
  });

  it('lets organizationID override groupID', async () => {
    const id = await newThread();
    await updateOk(id, { groupID: 'elsewhere', organizationID: 'third' });
    expect((await getThread(id)).groupID).toBe('third');
  });

  it('answers 401 organization_not_found for an unknown group and leaves the thread where it was', async () => {
    const id = await newThread();
    for (const body of [{ groupID: 'no-such-group' }, { groupID: 'elsewhere', organizationID: 'no-such-group' }]) {
      const response = await update(id, { ...body, name: 'Not applied' });
      expect(response.status).toBe(401);
      expect(response.body.error).toBe('organization_not_found');
    }
    expect(await getThread(id)).toMatchObject({ groupID: 'team', name: 'Update me' });
  });

  it('renames the thread: the new id has everything, the old id is gone', async () => {
    const id = await newThread();
    await post(id, { authorID: 'bob', content: paragraph('reply') });
    const renamed = uniqueId('renamed');
    await updateOk(id, { id: renamed, name: 'Renamed too' });
    const gone = await api.get(path(id));
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('thread_not_found');
    expect(await getThread(renamed)).toMatchObject({ id: renamed, name: 'Renamed too', total: 2, subscribers: ['ann', 'bob'] });
    expect((await messagesOf(renamed)).map((message) => message.threadID)).toEqual([renamed, renamed]);
  });

  it('renames only one of two threads racing for the same new id; the other gets 409', async () => {
    const first = await newThread();
    const second = await newThread();
    const target = uniqueId('contested');
    const responses = await Promise.all([update(first, { id: target }), update(second, { id: target })]);
    expect(responses.map((response) => response.status).sort()).toEqual([200, 409]);
    const loser = responses.find((response) => response.status === 409)!;
    expect(loser.body.error).toBe('thread_already_exists');
    const remaining = await Promise.all([api.get(path(first)), api.get(path(second))]);
    expect(remaining.map((response) => response.status).sort()).toEqual([200, 404]);
    expect((await getThread(target)).id).toBe(target);
  });

  it('accepts its own id as a no-op rename', async () => {
    const id = await newThread();
    await updateOk(id, { id });
    expect((await getThread(id)).id).toBe(id);
  });

  it('answers 400 invalid_field for a new id that is not an identifier', async () => {
    const id = await newThread();
    for (const bad of ['', 'cord:mine', 'x'.repeat(321), 'tab\there']) {
      const response = await update(id, { id: bad });
      expect(response.status, bad).toBe(400);
      expect(response.body.error).toBe('invalid_field');
    }
    expect((await getThread(id)).id).toBe(id);
  });

  it('answers 409 thread_already_exists when the new id is taken', async () => {
    const id = await newThread({ name: 'First' });
    const other = await newThread({ name: 'Second' });
    const response = await update(id, { id: other });
    expect(response.status).toBe(409);
    expect(response.body.error).toBe('thread_already_exists');
    expect((await getThread(id)).name).toBe('First');
    expect((await getThread(other)).name).toBe('Second');
  });

  it('sets extraClassnames and ignores null', async () => {
    const id = await newThread();
    await updateOk(id, { extraClassnames: 'big red' });
    expect((await getThread(id)).extraClassnames).toBe('big red');
    await updateOk(id, { extraClassnames: null });
    expect((await getThread(id)).extraClassnames).toBe('big red');
  });

  it('subscribes group members with addSubscribers and ignores non-members and unknown users', async () => {
    const id = await newThread();
    await updateOk(id, { addSubscribers: ['bob', 'out', 'ghost'] });
    const thread = await getThread(id);
    expect(thread.subscribers).toEqual(['ann', 'bob']);
    expect(thread.participants.map((participant: any) => participant.userID)).toEqual(['ann', 'bob']);
    expect(thread.participants[1]).toEqual({ userID: 'bob', lastSeenTimestamp: null, displayName: 'B' });
  });

  it('unsubscribes with removeSubscribers but keeps the participant', async () => {
    const id = await newThread();
    await post(id, { authorID: 'bob', content: paragraph('reply') });
    await updateOk(id, { removeSubscribers: ['bob', 'cat'] });
    const thread = await getThread(id);
    expect(thread.subscribers).toEqual(['ann']);
    expect(thread.participants.map((participant: any) => participant.userID)).toEqual(['ann', 'bob']);
    expect(thread.participants[1].lastSeenTimestamp).not.toBeNull();
  });

  it('adds and removes subscribers in one request', async () => {
    const id = await newThread();
    await updateOk(id, { addSubscribers: ['bob', 'cat'], removeSubscribers: ['ann'] });
    expect((await getThread(id)).subscribers).toEqual(['bob', 'cat']);
  });

  it('answers 400 invalid_field for the same user in addSubscribers and removeSubscribers', async () => {
    const id = await newThread();
    const response = await update(id, { addSubscribers: ['bob', 'cat'], removeSubscribers: ['cat'] });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_field');
    expect((await getThread(id)).subscribers).toEqual(['ann']);
  });

  it('answers 401 user_not_found when none of the listed users exists', async () => {
    const id = await newThread();
    for (const body of [
      { addSubscribers: ['ghost-1', 'ghost-2'] },
      { removeSubscribers: ['ghost-1'] },
      { typing: ['ghost-1'] },
      { seenByUsers: [{ userID: 'ghost-1', seen: true }] },
    ]) {
      const response = await update(id, body);
      expect(response.status, JSON.stringify(body)).toBe(401);
      expect(response.body.error).toBe('user_not_found');
    }
  });

  it('marks the thread seen up to its newest message with seenByUsers, creating an unsubscribed participant', async () => {
    const id = await newThread({}, { createdTimestamp: '2024-06-01T00:00:00.000Z' });
    await post(id, { authorID: 'ann', content: paragraph('newest'), createdTimestamp: '2024-06-02T03:04:05.678Z' });
    await updateOk(id, { seenByUsers: [{ userID: 'cat', seen: true }] });
    const thread = await getThread(id);
    expect(thread.participants.find((participant: any) => participant.userID === 'cat')).toEqual({
      userID: 'cat',
      lastSeenTimestamp: '2024-06-02T03:04:05.678Z',
      displayName: 'Cat',
    });
    expect(thread.subscribers).toEqual(['ann']);
  });

  it('counts a later reaction as the newest thing seen', async () => {
    const id = await newThread({}, { createdTimestamp: '2024-06-01T00:00:00.000Z' });
    const [first] = await messagesOf(id);
    const reacted = await api.put(`${path(id)}/messages/${encodeURIComponent(first.id)}`, {
      addReactions: [{ reaction: '👍', userID: 'bob', timestamp: '2024-06-03T00:00:00.000Z' }],
    });
    expect(reacted.status).toBe(200);
    await updateOk(id, { seenByUsers: [{ userID: 'cat', seen: true }] });
    const cat = (await getThread(id)).participants.find((participant: any) => participant.userID === 'cat');
    expect(cat.lastSeenTimestamp).toBe('2024-06-03T00:00:00.000Z');
  });

  it('counts a later edit as the newest thing seen, so the user sees the edited message again', async () => {
    const id = await newThread({}, { createdTimestamp: '2024-06-01T00:00:00.000Z' });
    const [first] = await messagesOf(id);
    const edited = await api.put(`${path(id)}/messages/${encodeURIComponent(first.id)}`, {
      content: paragraph('edited'),
      updatedTimestamp: '2024-06-04T00:00:00.000Z',
    });
    expect(edited.status).toBe(200);
    await updateOk(id, { seenByUsers: [{ userID: 'cat', seen: true }] });
    const cat = (await getThread(id)).participants.find((participant: any) => participant.userID === 'cat');
    expect(cat.lastSeenTimestamp).toBe('2024-06-04T00:00:00.000Z');
    expect((await messagesOf(id))[0].seenBy).toContain('cat');
  });

  it('marks the thread unseen with seen: false', async () => {
    const id = await newThread();
    await post(id, { authorID: 'bob', content: paragraph('reply') });
    await updateOk(id, { seenByUsers: [{ userID: 'bob', seen: false }, { userID: 'ann', seen: true }] });
    const thread = await getThread(id);
    const bob = thread.participants.find((participant: any) => participant.userID === 'bob');
    expect(bob.lastSeenTimestamp).toBeNull();
    expect(thread.subscribers).toEqual(['ann', 'bob']);
    const ann = thread.participants.find((participant: any) => participant.userID === 'ann');
    expect(ann.lastSeenTimestamp).not.toBeNull();
  });

  it('ignores seenByUsers on a thread without messages', async () => {
    const id = uniqueId('empty');
    expect((await api.post('/v1/threads', { id, ...creation() })).status).toBe(200);
    await updateOk(id, { seenByUsers: [{ userID: 'bob', seen: true }, { userID: 'cat', seen: false }] });
    expect((await getThread(id)).participants).toEqual([]);
  });

  it('ignores seenByUsers entries of users outside the group', async () => {
    const id = await newThread();
    await updateOk(id, { seenByUsers: [{ userID: 'out', seen: true }] });
    expect((await getThread(id)).participants.map((participant: any) => participant.userID)).toEqual(['ann']);
  });

  it('accepts typing', async () => {
    const id = await newThread();
    await updateOk(id, { typing: ['bob'] });
    await updateOk(id, { typing: [] });
    expect((await getThread(id)).typing).toEqual([]);
  });

  it('accepts an empty object as a no-op', async () => {
    const id = await newThread({ name: 'Unchanged' });
    await updateOk(id, {});
    expect(await getThread(id)).toMatchObject({ name: 'Unchanged', resolved: false, total: 1 });
  });

  it('answers 404 thread_not_found for an unknown thread', async () => {
    const response = await update('no-such-thread', { name: 'x' });
    expect(response.status).toBe(404);
    expect(response.body.error).toBe('thread_not_found');
    expect((await api.get('/v1/threads/no-such-thread')).status).toBe(404);
  });

  it('checks in the documented order: body, thread, new id, subscriber conflict, group, user', async () => {
    const id = await newThread();
    const taken = await newThread();
    const steps: [unknown, string, number, string][] = [
      [{ colour: 'red' }, 'no-such-thread', 400, 'unexpected_field'],
      [{ id: 'cord:bad', groupID: 'no-such-group' }, 'no-such-thread', 404, 'thread_not_found'],
      [{ id: 'cord:bad', addSubscribers: ['bob'], removeSubscribers: ['bob'] }, id, 400, 'invalid_field'],
      [{ id: taken, addSubscribers: ['bob'], removeSubscribers: ['bob'] }, id, 409, 'thread_already_exists'],
      [{ addSubscribers: ['bob'], removeSubscribers: ['bob'], groupID: 'no-such-group' }, id, 400, 'invalid_field'],
      [{ groupID: 'no-such-group', resolved: true, userID: 'ghost' }, id, 401, 'organization_not_found'],
      [{ resolved: true, userID: 'ghost', addSubscribers: ['ghost-2'] }, id, 401, 'user_not_found'],
    ];
    for (const [body, threadId, status, error] of steps) {
      const response = await update(threadId, body);
      expect([response.status, response.body.error], JSON.stringify(body)).toEqual([status, error]);
    }
    expect(await getThread(id)).toMatchObject({ id, resolved: false, subscribers: ['ann'], groupID: 'team' });
  });

  it('answers 400 invalid_field for a path id that is not an identifier, on PUT and DELETE', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const response = await api.call(method, path('cord:not-a-uuid'), method === 'PUT' ? { name: 'x' } : undefined);
      expect(response.status, method).toBe(400);
      expect(response.body.error).toBe('invalid_field');
    }
  });

  it('answers 400 unexpected_field for a key it does not know, naming it', async () => {
    const id = await newThread();
    const response = await update(id, { name: 'x', colour: 'red' });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('unexpected_field');
    expect(response.body.message).toContain('colour');
    expect((await getThread(id)).name).toBe('Update me');
  });

  it('answers 400 invalid_field for values of the wrong type', async () => {
    const id = await newThread();
    for (const [field, value] of [
      ['resolved', 'yes'],
      ['resolvedTimestamp', 1700000000000],
      ['resolvedTimestamp', 'yesterday'],
      ['name', 5],
      ['url', null],
      ['location', 'home'],
      ['groupID', 7],
      ['userID', true],
      ['extraClassnames', 3],
      ['addSubscribers', 'bob'],
      ['removeSubscribers', [1]],
      ['typing', 'bob'],
      ['seenByUsers', [{ userID: 'bob', seen: 'yes' }]],
    ] as const) {
      const response = await update(id, { [field]: value });
      expect(response.status, `${field}: ${JSON.stringify(value)}`).toBe(400);
      expect(response.body.error).toBe('invalid_field');
      expect(response.body.message).toContain(field);
    }
  });

  it('answers 400 missing_field for a seenByUsers entry without seen', async () => {
    const id = await newThread();
    const response = await update(id, { seenByUsers: [{ userID: 'bob' }] });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('missing_field');
    expect(response.body.message).toContain('seen');
  });

  it('answers 400 invalid_request for an empty body or a body that is not an object', async () => {
    const id = await newThread();
    for (const rawBody of ['', '   ', '[]', 'null', '{"name":']) {
      const response = await request(system.url, 'PUT', path(id), {
        token: await serverToken(app.id, app.secret),
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status, JSON.stringify(rawBody)).toBe(400);
      expect(response.body.error).toBe('invalid_request');
    }
  });
});
