/**
 * GET /v1/client/threads and GET /v1/client/thread/<ID> (original-extras §4.4–§4.7): the viewer's
 * threads with their read state, sorted and cut as the original, within the viewer's groups only.
 */
import { describe, expect, it } from 'vitest';
import { request, uniqueId, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { clientToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('client threads app', (started) => ({ system, app } = started));

const enc = encodeURIComponent;
const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];

async function read(viewer: string, path: string) {
  const token = await clientToken(app.id, app.secret, { user_id: viewer });
  return request(system.url, 'GET', path, { token });
}

async function post(threadId: string, authorId: string, groupId: string, text = 'hello', messageId = uniqueId('message')) {
  const response = await app.client.post(`/v1/threads/${enc(threadId)}/messages`, {
    id: messageId,
    authorID: authorId,
    content: paragraph(text),
    createThread: { groupID: groupId, location: { page: 'p' }, url: 'https://example.com/t', name: 'T' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return messageId;
}

/** Two groups: the viewer and `other` in `mine`, `stranger` alone in `theirs`. */
async function people() {
  const [viewer, other, stranger, mine, theirs] = ['viewer', 'other', 'stranger', 'mine', 'theirs'].map(uniqueId);
  for (const id of [viewer, other, stranger]) expect((await app.client.put(`/v1/users/${enc(id)}`, { name: id })).status).toBe(200);
  expect((await app.client.put(`/v1/groups/${enc(mine)}`, { name: 'Mine', members: [viewer, other] })).status).toBe(200);
  expect((await app.client.put(`/v1/groups/${enc(theirs)}`, { name: 'Theirs', members: [stranger] })).status).toBe(200);
  return { viewer, other, stranger, mine, theirs };
}

describe('GET /v1/client/threads', () => {
  it("lists the viewer's threads with their read state, sorted and cut, never another group's", async () => {
    const { viewer, other, stranger, mine, theirs } = await people();
    const [older, newer, foreign] = ['older', 'newer', 'foreign'].map(uniqueId);
    const olderFirst = await post(older, other, mine, 'first');
    await post(newer, viewer, mine, 'mine');
    await post(foreign, stranger, theirs);
    const olderLast = await post(older, other, mine, 'last');

    const listed = await read(viewer, '/v1/client/threads');
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.threads.map((thread: { id: string }) => thread.id)).toEqual([newer, older]);
    expect(listed.body).toMatchObject({ loading: false, hasMore: false, counts: { total: 2, unread: 1, new: 1, resolved: 0, empty: 0 } });
    const [own, theirsUnread] = listed.body.threads;
    expect(own).toMatchObject({ groupID: mine, total: 1, unread: 0, viewerIsThreadParticipant: true });
    expect(theirsUnread).toMatchObject({
      total: 2,
      unread: 2,
      viewerIsThreadParticipant: false,
      firstMessage: { id: olderFirst, seen: false, plaintext: 'first' },
      lastMessage: { id: olderLast, seen: false, plaintext: 'last' },
    });

    // The newest message sorts `older` first; ascending turns it round; one per page says there are more.
    const byRecent = await read(viewer, '/v1/client/threads?sortBy=most_recent_message_timestamp');
    expect(byRecent.body.threads.map((thread: { id: string }) => thread.id)).toEqual([older, newer]);
    const ascending = await read(viewer, '/v1/client/threads?sortDirection=ascending');
    expect(ascending.body.threads.map((thread: { id: string }) => thread.id)).toEqual([older, newer]);
    const one = await read(viewer, '/v1/client/threads?initialFetchCount=1');
    expect(one.body).toMatchObject({ hasMore: true, counts: { total: 2 } });
    expect(one.body.threads).toHaveLength(1);

    // Seeing the thread clears its unread count; a filter narrows the list and the counts alike.
    expect((await app.client.put(`/v1/threads/${enc(older)}`, { seenByUsers: [{ userID: viewer, seen: true }] })).status).toBe(200);
    const seen = await read(viewer, `/v1/client/threads?filter=${enc(JSON.stringify({ viewer: 'subscribed' }))}`);
    // Seeing a thread does not subscribe to it: only the viewer's own thread is subscribed.
    expect(seen.body.threads.map((thread: { id: string }) => thread.id)).toEqual([newer]);
    expect(seen.body.counts).toMatchObject({ total: 1 });
    const afterSeen = (await read(viewer, '/v1/client/threads')).body.threads.find((thread: { id: string }) => thread.id === older);
    expect(afterSeen).toMatchObject({ unread: 0, viewerIsThreadParticipant: true, lastMessage: { seen: true } });
    expect(afterSeen.participants).toContainEqual({ userID: viewer, displayName: viewer, lastSeenTimestamp: expect.any(String) });

    // The groupID filter narrows to one of the viewer's groups; another group's ID leaves nothing.
    const inMine = await read(viewer, `/v1/client/threads?filter=${enc(JSON.stringify({ groupID: mine }))}`);
    expect(inMine.body.threads).toHaveLength(2);
    const inTheirs = await read(viewer, `/v1/client/threads?filter=${enc(JSON.stringify({ groupID: theirs }))}`);
    expect(inTheirs.body).toMatchObject({ threads: [], counts: { total: 0, empty: 0 } });

    // The stranger sees only their own group's thread.
    const strangers = await read(stranger, '/v1/client/threads');
    expect(strangers.body.threads.map((thread: { id: string }) => thread.id)).toEqual([foreign]);
  });

  it('refuses bad paging and sort values, naming them', async () => {
    const { viewer } = await people();
    expectError(await read(viewer, '/v1/client/threads?initialFetchCount=many'), 400, 'invalid_field', /initialFetchCount/);
    expectError(await read(viewer, '/v1/client/threads?initialFetchCount=-1'), 400, 'invalid_field', /initialFetchCount/);
    expectError(await read(viewer, '/v1/client/threads?sortBy=name'), 400, 'invalid_field', /sortBy/);
    expectError(await read(viewer, '/v1/client/threads?sortDirection=up'), 400, 'invalid_field', /sortDirection/);
    expectError(await read(viewer, `/v1/client/threads?filter=${enc(JSON.stringify({ authorID: 'x' }))}`), 400, 'invalid_field', /authorID/);
    const none = await read(viewer, '/v1/client/threads?initialFetchCount=0');
    expect(none.body).toMatchObject({ threads: [], hasMore: false });
  });
});

describe('GET /v1/client/thread/<ID>', () => {
  it('answers a short thread whole, a long one from the newest, and not found for another group', async () => {
    const { viewer, other, stranger, mine, theirs } = await people();
    const [short, long, foreign] = ['short', 'long', 'foreign'].map(uniqueId);
    const shortIds = [await post(short, other, mine, 'one'), await post(short, viewer, mine, 'two')];
    const longIds: string[] = [];
    for (let index = 0; index < 6; index++) longIds.push(await post(long, other, mine, `m${index}`));
    await post(foreign, stranger, theirs);

    const whole = await read(viewer, `/v1/client/thread/${enc(short)}`);
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    expect(whole.body).toMatchObject({ loading: false, hasMore: false, thread: { id: short, total: 2, unread: 0, viewerIsThreadParticipant: true } });
    expect(whole.body.messages.map((message: { id: string; seen: boolean }) => [message.id, message.seen])).toEqual([
      [shortIds[0], true],
      [shortIds[1], true],
    ]);

    // Not a participant: the first is dropped, the last is answered.
    const outsider = await read(viewer, `/v1/client/thread/${enc(long)}`);
    expect(outsider.body).toMatchObject({ hasMore: true, thread: { unread: 6, viewerIsThreadParticipant: false, firstMessage: { id: longIds[0] } } });
    expect(outsider.body.messages.map((message: { id: string }) => message.id)).toEqual([longIds[5]]);

    const lastThree = await read(viewer, `/v1/client/thread/${enc(long)}?initialFetchCount=3`);
    expect(lastThree.body.hasMore).toBe(true);
    expect(lastThree.body.messages.map((message: { id: string }) => message.id)).toEqual(longIds.slice(3));
    const all = await read(viewer, `/v1/client/thread/${enc(long)}?initialFetchCount=5`);
    expect(all.body.hasMore).toBe(false);
    expect(all.body.messages.map((message: { id: string }) => message.id)).toEqual(longIds);

    // A participant who has seen everything gets the window from the last seen message on.
    expect((await app.client.put(`/v1/threads/${enc(long)}`, { seenByUsers: [{ userID: viewer, seen: true }] })).status).toBe(200);
    const participant = await read(viewer, `/v1/client/thread/${enc(long)}`);
    expect(participant.body).toMatchObject({ hasMore: true, thread: { unread: 0, viewerIsThreadParticipant: true } });
    expect(participant.body.messages.map((message: { id: string; seen: boolean }) => [message.id, message.seen])).toEqual([[longIds[5], true]]);

    // A participant without a name shows their short name (the REST thread would show null).
    const [nameless, named] = [uniqueId('nameless'), uniqueId('named')];
    expect((await app.client.put(`/v1/users/${enc(nameless)}`, { shortName: 'Nemo', addGroups: [mine] })).status).toBe(200);
    await post(named, nameless, mine);
    const byShortName = await read(viewer, `/v1/client/thread/${enc(named)}`);
    expect(byShortName.body.thread.participants).toContainEqual({ userID: nameless, displayName: 'Nemo', lastSeenTimestamp: expect.any(String) });

    expectError(await read(viewer, `/v1/client/thread/${enc(foreign)}`), 404, 'thread_not_found');
    expectError(await read(viewer, `/v1/client/thread/${enc(uniqueId('unknown'))}`), 404, 'thread_not_found');
    expectError(await read(viewer, `/v1/client/thread/${enc(short)}?initialFetchCount=x`), 400, 'invalid_field', /initialFetchCount/);
  });
});
