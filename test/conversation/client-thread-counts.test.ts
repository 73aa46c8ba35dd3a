/**
 * GET /v1/client/threadCounts (original-extras §4.7): the counts of the viewer's threads from
 * their read state, within the viewer's groups only, and with the thread filter; and
 * GET /v1/client/message/<ID>, never a message of another group.
 */
import { describe, expect, it } from 'vitest';
import { request, uniqueId, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { clientToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('client counts app', (started) => ({ system, app } = started));

const enc = encodeURIComponent;
const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];

async function counts(viewer: string, filter?: object) {
  const token = await clientToken(app.id, app.secret, { user_id: viewer });
  const query = filter ? `?filter=${enc(JSON.stringify(filter))}` : '';
  return request(system.url, 'GET', `/v1/client/threadCounts${query}`, { token });
}

async function post(threadId: string, authorId: string, groupId: string, location: object, messageId = uniqueId('message')) {
  const response = await app.client.post(`/v1/threads/${enc(threadId)}/messages`, {
    id: messageId,
    authorID: authorId,
    content: paragraph('hello'),
    createThread: { groupID: groupId, location, url: 'https://example.com/t', name: 'T' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

describe('GET /v1/client/threadCounts', () => {
  it("counts the viewer's threads by their read state, and nothing of another group", async () => {
    const [viewer, other, stranger, mine, theirs] = ['viewer', 'other', 'stranger', 'mine', 'theirs'].map(uniqueId);
    for (const id of [viewer, other, stranger]) expect((await app.client.put(`/v1/users/${enc(id)}`, { name: id })).status).toBe(200);
    expect((await app.client.put(`/v1/groups/${enc(mine)}`, { name: 'Mine', members: [viewer, other] })).status).toBe(200);
    expect((await app.client.put(`/v1/groups/${enc(theirs)}`, { name: 'Theirs', members: [stranger] })).status).toBe(200);

    const [unread, own, resolved, foreign, empty] = ['unread', 'own', 'resolved', 'foreign', 'empty'].map(uniqueId);
    await post(unread, other, mine, { page: 'a' });
    await post(own, viewer, mine, { page: 'b' });
    await post(resolved, other, mine, { page: 'a' });
    expect((await app.client.put(`/v1/threads/${enc(resolved)}`, { resolved: true })).status).toBe(200);
    await post(foreign, stranger, theirs, { page: 'a' });
    const created = await app.client.post('/v1/threads', { id: empty, groupID: mine, location: { page: 'a' }, url: 'https://example.com/e', name: 'E' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);

    const first = await counts(viewer);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ total: 3, unread: 1, unreadSubscribed: 0, new: 1, resolved: 1, empty: 1 });

    expect((await app.client.put(`/v1/threads/${enc(unread)}`, { addSubscribers: [viewer] })).status).toBe(200);
    expect((await counts(viewer)).body).toMatchObject({ unread: 1, unreadSubscribed: 1 });

    // Filters: location (exact, or partial), resolvedStatus, viewer.
    expect((await counts(viewer, { location: { page: 'b' } })).body).toEqual({ total: 1, unread: 0, unreadSubscribed: 0, new: 0, resolved: 0, empty: 0 });
    expect((await counts(viewer, { resolvedStatus: 'resolved' })).body).toMatchObject({ total: 1, resolved: 1, unread: 0 });
    expect((await counts(viewer, { viewer: 'subscribed' })).body).toMatchObject({ unreadSubscribed: 1 });
    // groupID narrows to one of the viewer's groups; another group's leaves nothing to count.
    expect((await counts(viewer, { groupID: mine })).body).toMatchObject({ total: 3, empty: 1 });
    expect((await counts(viewer, { groupID: theirs })).body).toEqual({ total: 0, unread: 0, unreadSubscribed: 0, new: 0, resolved: 0, empty: 0 });

    expect((await app.client.put(`/v1/threads/${enc(unread)}`, { seenByUsers: [{ userID: viewer, seen: true }] })).status).toBe(200);
    expect((await counts(viewer)).body).toMatchObject({ unread: 0, new: 0, unreadSubscribed: 0 });

    // The stranger sees their own group's thread only, seen since they wrote it.
    expect((await counts(stranger)).body).toEqual({ total: 1, unread: 0, unreadSubscribed: 0, new: 0, resolved: 0, empty: 0 });
  });

  it('refuses a malformed filter, naming it', async () => {
    const viewer = uniqueId('viewer');
    expect((await app.client.put(`/v1/users/${enc(viewer)}`, { name: 'v' })).status).toBe(200);
    expectError(await counts(viewer, { authorID: 'x' }), 400, 'invalid_field', 'The filter object does not support "authorID" as a field.');
    expectError(await counts(viewer, { viewer: 'everyone' }), 400, 'invalid_field', /"viewer"/);
    expectError(await counts(viewer, { resolvedStatus: 'maybe' }), 400, 'invalid_field', /resolvedStatus/);
  });
});

describe('GET /v1/client/message/<ID>', () => {
  it("answers a message of the viewer's groups with seen, and not found for another group's", async () => {
    const [viewer, other, stranger, mine, theirs] = ['viewer', 'other', 'stranger', 'mine', 'theirs'].map(uniqueId);
    for (const id of [viewer, other, stranger]) expect((await app.client.put(`/v1/users/${enc(id)}`, { name: id })).status).toBe(200);
    expect((await app.client.put(`/v1/groups/${enc(mine)}`, { name: 'Mine', members: [viewer, other] })).status).toBe(200);
    expect((await app.client.put(`/v1/groups/${enc(theirs)}`, { name: 'Theirs', members: [stranger] })).status).toBe(200);
    const [thread, foreignThread, messageId, foreignId] = ['thread', 'foreign', 'message', 'foreign-message'].map(uniqueId);
    await post(thread, other, mine, { page: 'a' }, messageId);
    await post(foreignThread, stranger, theirs, { page: 'a' }, foreignId);

    const token = await clientToken(app.id, app.secret, { user_id: viewer });
    const read = (id: string) => request(system.url, 'GET', `/v1/client/message/${enc(id)}`, { token });
    const unseen = await read(messageId);
    expect(unseen.status).toBe(200);
    expect(unseen.body).toMatchObject({ id: messageId, threadID: thread, groupID: mine, authorID: other, seen: false });
    expect((await app.client.put(`/v1/threads/${enc(thread)}`, { seenByUsers: [{ userID: viewer, seen: true }] })).status).toBe(200);
    expect((await read(messageId)).body.seen).toBe(true);

    expectError(await read(foreignId), 404, 'message_not_found');
    expectError(await read(uniqueId('unknown')), 404, 'message_not_found');
  });
});
