/**
 * Threads through the gateway: the thread object, creating threads with
 * POST /v1/threads and with createThread, deleting them, tenant isolation and concurrent creation.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApplication, uniqueId, type ApiClient, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;
let api: ApiClient;

const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];
const mentioning = (userId: string, label: string) => [
  { type: 'p', children: [{ text: 'hello ' }, { type: 'mention', user: { id: userId }, children: [{ text: `@${label}` }] }] },
];
const creation = (extra: Record<string, unknown> = {}) => ({
  groupID: 'team',
  location: { page: 'threads-test' },
  url: 'https://example.com/page',
  name: 'A thread',
  ...extra,
});
const path = (threadId: string) => `/v1/threads/${encodeURIComponent(threadId)}`;

async function post(client: ApiClient, threadId: string, body: Record<string, unknown>) {
  const response = await client.post(`${path(threadId)}/messages`, body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.messageID as string;
}

async function getThread(client: ApiClient, threadId: string) {
  const response = await client.get(path(threadId));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function threadRow(applicationId: string, threadId: string) {
  const { rows } = await system.sql.query(
    'SELECT internal_id FROM conversation.threads WHERE application_id = $1 AND external_id = $2',
    [applicationId, threadId],
  );
  return rows;
}

systemWithApplication('test app', async (started) => {
  ({ system, app } = started);
  api = app.client;
  const users: [string, Record<string, unknown>][] = [
    ['ann', { name: 'Ann' }],
    ['bob', { name: 'Bob', shortName: 'B' }],
    ['cat', { shortName: 'C' }],
    ['dan', { name: 'Dan' }],
    ['zed', { name: 'Zed' }],
    ['out', { name: 'Outsider' }],
  ];
  for (const [id, body] of users) expect((await api.put(`/v1/users/${id}`, body)).status).toBe(200);
  expect((await api.put('/v1/groups/team', { name: 'Team', members: ['ann', 'bob', 'cat', 'dan', 'zed'] })).status).toBe(200);
  expect((await api.put('/v1/groups/other', { name: 'Other', members: ['ann', 'out'] })).status).toBe(200);
});

describe('the thread object', () => {
  const threadId = 'rich-thread';
  const t0 = Date.parse('2024-01-01T00:00:00.000Z');
  const ts = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
  let thread: any;

  beforeAll(async () => {
    await post(api, threadId, {
      authorID: 'ann',
      content: mentioning('dan', 'Dan'),
      createdTimestamp: ts(0),
      createThread: creation({
        location: { page: 'rich', index: 1, open: true },
        url: 'https://example.com/rich',
        name: 'Rich thread',
        metadata: { color: 'red', size: 3, pinned: false },
      }),
    });
    await post(api, threadId, { authorID: 'zed', content: mentioning('cat', 'C'), createdTimestamp: ts(1) });
    await post(api, threadId, { authorID: 'bob', content: paragraph('second reply'), createdTimestamp: ts(2) });
    await post(api, threadId, { authorID: 'cat', content: paragraph('third reply'), createdTimestamp: ts(3) });
    const deleted = await post(api, threadId, { authorID: 'dan', content: paragraph('soon deleted'), createdTimestamp: ts(4) });
    expect((await api.put(`${path(threadId)}/messages/${encodeURIComponent(deleted)}`, { deleted: true })).status).toBe(200);
    await post(api, threadId, { authorID: 'bob', type: 'action_message', content: paragraph('did something'), createdTimestamp: ts(5) });
    await post(api, threadId, { authorID: 'ann', content: paragraph('the starter replies too'), createdTimestamp: ts(6) });
    thread = await getThread(api, threadId);
  });

  it('carries its id, and its group as both groupID and organizationID', () => {
    expect(thread.id).toBe(threadId);
    expect(thread.groupID).toBe('team');
    expect(thread.organizationID).toBe('team');
  });

  it('counts user, action and soft-deleted messages separately, and all of them in total', () => {
    expect(thread.userMessages).toBe(5);
    expect(thread.actionMessages).toBe(1);
    expect(thread.deletedMessages).toBe(1);
    expect(thread.total).toBe(7);
  });

  it('lists as repliers the authors of non-deleted user messages other than the first message, in order of their first reply', () => {
    // dan's only message is soft-deleted; ann started the thread but replied later as well.
    expect(thread.repliers).toEqual(['zed', 'bob', 'cat', 'ann']);
  });

  it('lists the authors of action messages as actionMessageRepliers', () => {
    expect(thread.actionMessageRepliers).toEqual(['bob']);
  });

  it('lists mentioned users in order of their first mention', () => {
    expect(thread.mentioned).toEqual(['dan', 'cat']);
  });

  it('lists every participant with the time they last saw the thread, in order of participation', () => {
    expect(thread.participants).toEqual([
      { userID: 'ann', lastSeenTimestamp: ts(6), displayName: 'Ann' },
      // dan became a participant when he was mentioned in the first message.
      { userID: 'dan', lastSeenTimestamp: ts(4), displayName: 'Dan' },
      // cat too, when zed mentioned her in the first reply.
      { userID: 'cat', lastSeenTimestamp: ts(3), displayName: null },
      { userID: 'zed', lastSeenTimestamp: ts(1), displayName: 'Zed' },
      { userID: 'bob', lastSeenTimestamp: ts(5), displayName: 'B' },
    ]);
  });

  it('uses the short name as displayName, else the name, and null for a user without a name even if they have a short name', () => {
    const names = Object.fromEntries(thread.participants.map((p: any) => [p.userID, p.displayName]));
    expect(names.bob).toBe('B');
    expect(names.ann).toBe('Ann');
    expect(names.cat).toBeNull();
  });

  it('lists authors and mentioned members as subscribers', () => {
    expect(thread.subscribers).toEqual(['ann', 'dan', 'cat', 'zed', 'bob']);
  });

  it('returns name, url, location, metadata as created, nobody typing, no extraClassnames, not resolved', () => {
    expect(thread).toMatchObject({
      name: 'Rich thread',
      url: 'https://example.com/rich',
      location: { page: 'rich', index: 1, open: true },
      metadata: { color: 'red', size: 3, pinned: false },
      typing: [],
      extraClassnames: null,
      resolved: false,
      resolvedTimestamp: null,
    });
  });

  it('has no keys beyond the documented ones', () => {
    expect(Object.keys(thread).sort()).toEqual(
      [
        'id',
        'organizationID',
        'groupID',
        'total',
        'userMessages',
        'actionMessages',
        'deletedMessages',
        'resolved',
        'resolvedTimestamp',
        'participants',
        'subscribers',
        'repliers',
        'actionMessageRepliers',
        'mentioned',
        'typing',
        'name',
        'url',
        'location',
        'metadata',
        'extraClassnames',
      ].sort(),
    );
  });

  it('is addressed by its id percent-encoded, whatever characters it has', async () => {
    const id = `odd id/with ${uniqueId('slash')} & ünïcode 🎉`;
    expect((await api.post('/v1/threads', { id, ...creation({ name: 'Odd' }) })).status).toBe(200);
    expect((await getThread(api, id)).id).toBe(id);
    const updated = await api.put(path(id), { name: 'Still odd' });
    expect(updated.body).toEqual({ success: true, message: `You successfully updated thread ${id}` });
    await post(api, id, { authorID: 'ann', content: paragraph('hi') });
    expect(await getThread(api, id)).toMatchObject({ name: 'Still odd', total: 1 });
    expect((await api.delete(path(id))).body).toEqual({ success: true, message: `You successfully deleted thread ${id}` });
    expect((await api.get(path(id))).status).toBe(404);
  });

  it('is addressed by its generated cord: id for every operation', async () => {
    const { body } = await api.post('/v1/threads', creation({ name: 'Generated' }));
    const id = body.threadID as string;
    expect((await api.put(path(id), { name: 'Renamed generated' })).status).toBe(200);
    await post(api, id, { authorID: 'ann', content: paragraph('hi') });
    expect(await getThread(api, id)).toMatchObject({ id, name: 'Renamed generated', total: 1 });
    expect((await api.delete(path(id))).status).toBe(200);
    expect((await api.get(path(id))).status).toBe(404);
  });

  it('answers 404 thread_not_found for an unknown thread', async () => {
    const response = await api.get('/v1/threads/no-such-thread');
    expect(response.status).toBe(404);
    expect(response.body.error).toBe('thread_not_found');
  });

  it('answers 400 invalid_request for a thread id that is not an identifier', async () => {
    const response = await api.get(`/v1/threads/${encodeURIComponent('cord:not-a-uuid')}`);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_request');
  });
});

describe('POST /v1/threads', () => {
  it('creates an empty thread with the given id and answers the documented body', async () => {
    const id = uniqueId('standalone');
    const response = await api.post('/v1/threads', { id, ...creation({ name: 'Standalone', location: { page: 'solo' } }) });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: 'Thread created.', threadID: id });
    const thread = await getThread(api, id);
    expect(thread).toMatchObject({
      id,
      groupID: 'team',
      organizationID: 'team',
      name: 'Standalone',
      url: 'https://example.com/page',
      location: { page: 'solo' },
      metadata: {},
      extraClassnames: null,
      total: 0,
      userMessages: 0,
      actionMessages: 0,
      deletedMessages: 0,
      resolved: false,
      resolvedTimestamp: null,
      participants: [],
      subscribers: [],
      repliers: [],
      actionMessageRepliers: [],
      mentioned: [],
      typing: [],
    });
  });

  it('generates a cord:<uuid> id when none is given', async () => {
    const response = await api.post('/v1/threads', creation());
    expect(response.status).toBe(200);
    expect(response.body.threadID).toMatch(/^cord:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await getThread(api, response.body.threadID)).id).toBe(response.body.threadID);
  });

  it('stores metadata and extraClassnames given at creation', async () => {
    const id = uniqueId('with-extras');
    expect((await api.post('/v1/threads', { id, ...creation({ metadata: { a: 'b', n: 2 }, extraClassnames: 'x y' }) })).status).toBe(200);
    expect(await getThread(api, id)).toMatchObject({ metadata: { a: 'b', n: 2 }, extraClassnames: 'x y' });
  });

  it('accepts organizationID as the group', async () => {
    const id = uniqueId('org-alias');
    const { groupID: _unused, ...rest } = creation();
    expect((await api.post('/v1/threads', { id, ...rest, organizationID: 'other' })).status).toBe(200);
    expect(await getThread(api, id)).toMatchObject({ groupID: 'other', organizationID: 'other' });
  });

  it('subscribes only those addSubscribers who are members of the group, without a last-seen time', async () => {
    const id = uniqueId('subscribed');
    const response = await api.post('/v1/threads', { id, ...creation({ addSubscribers: ['bob', 'out', 'ghost', 'cat'] }) });
    expect(response.status).toBe(200);
    const thread = await getThread(api, id);
    expect(thread.subscribers).toEqual(['bob', 'cat']);
    expect(thread.participants).toEqual([
      { userID: 'bob', lastSeenTimestamp: null, displayName: 'B' },
      { userID: 'cat', lastSeenTimestamp: null, displayName: null },
    ]);
  });

  it('ignores the deprecated resolved flag', async () => {
    const id = uniqueId('deprecated-resolved');
    expect((await api.post('/v1/threads', { id, ...creation({ resolved: true }) })).status).toBe(200);
    expect(await getThread(api, id)).toMatchObject({ resolved: false, resolvedTimestamp: null });
  });

  it('answers 401 group_not_found for an unknown group and creates nothing', async () => {
    const id = uniqueId('no-group');
    const response = await api.post('/v1/threads', { id, ...creation({ groupID: 'no-such-group' }) });
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('group_not_found');
    expect((await api.get(path(id))).status).toBe(404);
  });

  it('answers 409 thread_already_exists for an existing id and leaves that thread alone', async () => {
    const id = uniqueId('taken');
    expect((await api.post('/v1/threads', { id, ...creation({ name: 'Original' }) })).status).toBe(200);
    const again = await api.post('/v1/threads', { id, ...creation({ name: 'Impostor', groupID: 'other' }) });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('thread_already_exists');
    expect(await getThread(api, id)).toMatchObject({ name: 'Original', groupID: 'team' });
  });

  it('answers 400 missing_field naming location, url and name when they are absent', async () => {
    const response = await api.post('/v1/threads', { groupID: 'team' });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('missing_field');
    for (const field of ['location', 'url', 'name']) expect(response.body.message).toContain(field);
  });

  it('answers 400 missing_field naming groupID when neither groupID nor organizationID is given', async () => {
    const { groupID: _unused, ...rest } = creation();
    const response = await api.post('/v1/threads', { id: uniqueId('groupless'), ...rest });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('missing_field');
    expect(response.body.message).toContain('groupID');
  });

  it('lists groupID with every other missing field in one missing_field answer', async () => {
    const response = await api.post('/v1/threads', {});
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: 'missing_field', message: 'Missing required fields: location, url, name and groupID.' });
  });

  it('answers 400 invalid_field for an id that is not an identifier', async () => {
    const response = await api.post('/v1/threads', { id: 'cord:mine', ...creation() });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_field');
  });

  it('answers 400 invalid_field for nested metadata and 400 unexpected_field for an unknown key', async () => {
    const nested = await api.post('/v1/threads', { id: uniqueId('nested'), ...creation({ metadata: { deep: { x: 1 } } }) });
    expect(nested.status).toBe(400);
    expect(nested.body.error).toBe('invalid_field');
    const unknown = await api.post('/v1/threads', { id: uniqueId('unknown-key'), ...creation({ colour: 'red' }) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('unexpected_field');
    expect(unknown.body.message).toContain('colour');
  });

  it('answers 400 invalid_request for an empty body', async () => {
    const response = await api.post('/v1/threads');
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_request');
  });
});

describe('creating a thread with its first message (createThread)', () => {
  it('creates the thread in the given group with the given fields', async () => {
    const id = uniqueId('created-by-message');
    await post(api, id, {
      authorID: 'ann',
      content: paragraph('first'),
      createThread: creation({ groupID: 'other', name: 'By message', metadata: { k: 'v' }, extraClassnames: 'cls' }),
    });
    expect(await getThread(api, id)).toMatchObject({
      id,
      groupID: 'other',
      name: 'By message',
      metadata: { k: 'v' },
      extraClassnames: 'cls',
      total: 1,
      userMessages: 1,
      repliers: [],
      subscribers: ['ann'],
    });
  });

  it('answers 400 missing_field naming createThread.url and friends when they are absent', async () => {
    const response = await api.post(`${path(uniqueId('incomplete'))}/messages`, {
      authorID: 'ann',
      content: paragraph('first'),
      createThread: { groupID: 'team', location: { page: 'x' } },
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('missing_field');
    expect(response.body.message).toContain('createThread.url');
    expect(response.body.message).toContain('createThread.name');
  });

  it('answers 400 missing_field naming createThread.groupID when no group is given', async () => {
    const { groupID: _unused, ...rest } = creation();
    const id = uniqueId('groupless-message');
    const response = await api.post(`${path(id)}/messages`, { authorID: 'ann', content: paragraph('first'), createThread: rest });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('missing_field');
    expect(response.body.message).toContain('createThread.groupID');
    expect((await api.get(path(id))).status).toBe(404);
  });

  it('subscribes only group members from createThread.addSubscribers, besides the author', async () => {
    const id = uniqueId('message-subscribers');
    await post(api, id, {
      authorID: 'ann',
      content: paragraph('first'),
      createThread: creation({ addSubscribers: ['out', 'dan', 'ghost'] }),
    });
    const thread = await getThread(api, id);
    expect([...thread.subscribers].sort()).toEqual(['ann', 'dan']);
  });

  it('leaves the creator unsubscribed, but a participant, when subscribeToThread is false', async () => {
    const id = uniqueId('quiet-creator');
    await post(api, id, { authorID: 'ann', content: paragraph('first'), subscribeToThread: false, createThread: creation() });
    const thread = await getThread(api, id);
    expect(thread.subscribers).toEqual([]);
    expect(thread.participants).toEqual([{ userID: 'ann', lastSeenTimestamp: expect.any(String), displayName: 'Ann' }]);
  });

  it('ignores createThread when the thread already exists', async () => {
    const id = uniqueId('exists-already');
    await post(api, id, { authorID: 'ann', content: paragraph('first'), createThread: creation({ name: 'Kept' }) });
    await post(api, id, {
      authorID: 'bob',
      content: paragraph('second'),
      createThread: { groupID: 'no-such-group', location: { other: true }, url: 'u', name: 'Ignored' },
    });
    expect(await getThread(api, id)).toMatchObject({ name: 'Kept', groupID: 'team', location: { page: 'threads-test' }, total: 2 });
  });

  it('answers 404 thread_not_found for a message to an unknown thread without createThread', async () => {
    const response = await api.post(`${path(uniqueId('nowhere'))}/messages`, { authorID: 'ann', content: paragraph('lost') });
    expect(response.status).toBe(404);
    expect(response.body.error).toBe('thread_not_found');
  });
});

describe('DELETE /v1/threads/<ID>', () => {
  it('deletes the thread with its messages and participants, and nothing else', async () => {
    const doomed = uniqueId('doomed');
    const kept = uniqueId('kept');
    await post(api, doomed, { authorID: 'ann', content: mentioning('bob', 'Bob'), createThread: creation() });
    await post(api, doomed, { authorID: 'cat', content: paragraph('reply') });
    const keptMessage = await post(api, kept, { authorID: 'ann', content: paragraph('stay'), createThread: creation() });
    const [{ internal_id: internalId }] = await threadRow(app.id, doomed);

    const response = await api.delete(path(doomed));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: `You successfully deleted thread ${doomed}` });

    const gone = await api.get(path(doomed));
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('thread_not_found');
    expect((await api.get(`${path(doomed)}/messages`)).status).toBe(404);
    const all = await api.get('/v1/messages');
    expect(all.body.messages.filter((message: any) => message.threadID === doomed)).toEqual([]);
    expect(all.body.messages.map((message: any) => message.id)).toContain(keptMessage);

    const messages = await system.sql.query('SELECT count(*)::int AS n FROM conversation.messages WHERE thread_id = $1', [internalId]);
    expect(messages.rows[0].n).toBe(0);
    const participants = await system.sql.query('SELECT count(*)::int AS n FROM conversation.thread_participants WHERE thread_id = $1', [
      internalId,
    ]);
    expect(participants.rows[0].n).toBe(0);
    expect((await getThread(api, kept)).total).toBe(1);
  });

  it('deletes an empty thread', async () => {
    const id = uniqueId('empty-doomed');
    expect((await api.post('/v1/threads', { id, ...creation() })).status).toBe(200);
    expect((await api.delete(path(id))).status).toBe(200);
    expect((await api.get(path(id))).status).toBe(404);
    expect(await threadRow(app.id, id)).toEqual([]);
  });

  it('frees the id for a new thread', async () => {
    const id = uniqueId('reborn');
    await post(api, id, { authorID: 'ann', content: paragraph('old life'), createThread: creation({ name: 'Old' }) });
    expect((await api.delete(path(id))).status).toBe(200);
    await post(api, id, { authorID: 'bob', content: paragraph('new life'), createThread: creation({ name: 'New' }) });
    expect(await getThread(api, id)).toMatchObject({ name: 'New', total: 1, subscribers: ['bob'] });
  });

  it('answers 404 thread_not_found for an unknown thread', async () => {
    const response = await api.delete('/v1/threads/never-existed');
    expect(response.status).toBe(404);
    expect(response.body.error).toBe('thread_not_found');
  });
});

describe('tenant isolation', () => {
  let other: TestApplication;
  const shared = 'shared-thread-id';

  beforeAll(async () => {
    other = await createApplication(system, 'other app');
    await post(api, shared, { authorID: 'ann', content: paragraph('owned by A'), createThread: creation({ name: 'A thread' }) });
  });

  it("does not let another application read, update or delete the thread", async () => {
    const read = await other.client.get(path(shared));
    expect(read.status).toBe(404);
    expect(read.body.error).toBe('thread_not_found');
    const update = await other.client.put(path(shared), { name: 'Hijacked' });
    expect(update.status).toBe(404);
    expect(update.body.error).toBe('thread_not_found');
    const remove = await other.client.delete(path(shared));
    expect(remove.status).toBe(404);
    expect((await other.client.get(`${path(shared)}/messages`)).status).toBe(404);
    expect(await getThread(api, shared)).toMatchObject({ name: 'A thread', total: 1 });
  });

  it("shows another application an empty list", async () => {
    const list = await other.client.get('/v1/threads');
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
    expect(list.headers.get('x-total-count')).toBe('0');
  });

  it('lets another application create its own thread with the same id', async () => {
    expect((await other.client.put('/v1/users/ann', { name: 'Other Ann' })).status).toBe(200);
    expect((await other.client.put('/v1/groups/team', { name: 'Other team', members: ['ann'] })).status).toBe(200);
    const created = await other.client.post('/v1/threads', { id: shared, ...creation({ name: 'B thread' }) });
    expect(created.status).toBe(200);
    expect(await getThread(other.client, shared)).toMatchObject({ id: shared, name: 'B thread', total: 0 });
    expect(await getThread(api, shared)).toMatchObject({ id: shared, name: 'A thread', total: 1 });
    expect(await threadRow(app.id, shared)).toHaveLength(1);
    expect(await threadRow(other.id, shared)).toHaveLength(1);
  });
});

describe('concurrent creation', () => {
  it('stores one thread with five messages when five first messages with createThread race', async () => {
    const id = uniqueId('race');
    const authors = ['ann', 'bob', 'cat', 'dan', 'zed'];
    const responses = await Promise.all(
      authors.map((authorID) =>
        api.post(`${path(id)}/messages`, { authorID, content: paragraph(`from ${authorID}`), createThread: creation({ name: 'Race' }) }),
      ),
    );
    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    const rows = await threadRow(app.id, id);
    expect(rows).toHaveLength(1);
    const thread = await getThread(api, id);
    expect(thread).toMatchObject({ total: 5, userMessages: 5 });
    expect([...thread.subscribers].sort()).toEqual(authors);
    const messages = await api.get(`${path(id)}/messages`);
    expect([...messages.body.map((message: any) => message.authorID)].sort()).toEqual(authors);
  });

  it('creates one thread and answers 409 to the others when POST /v1/threads races for one id', async () => {
    const id = uniqueId('post-race');
    const responses = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => api.post('/v1/threads', { id, ...creation({ name: `Racer ${n}` }) })),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409]);
    const winner = responses.find((response) => response.status === 200)!;
    expect(winner.body.threadID).toBe(id);
    expect(await threadRow(app.id, id)).toHaveLength(1);
  });
});
