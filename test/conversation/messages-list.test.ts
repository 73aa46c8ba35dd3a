/**
 * GET /v1/messages through the gateway: oldest first, keyset pagination, filters.
 * Each test uses its own application, so totals are exact.
 */
import { describe, expect, it } from 'vitest';
import { createApplication, uniqueId, type ApiClient, type ApiResponse } from '../support/client.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { expectError } from '../support/expect.js';

let system: TestSystem;

systemForFile((started) => (system = started));

const enc = encodeURIComponent;
const messagesPath = (threadID: string) => `/v1/threads/${enc(threadID)}/messages`;
const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];

interface Listed {
  messages: { id: string; plaintext: string; createdTimestamp: string }[];
  pagination: { token: string | null; total: number };
}

/** A fresh application with ann and bob in `team`, carl in `outside`. */
async function freshApplication(): Promise<ApiClient> {
  const { client } = await createApplication(system, uniqueId('list app'));
  for (const id of ['ann', 'bob', 'carl']) await client.put(`/v1/users/${id}`, { name: id });
  await client.put('/v1/groups/team', { name: 'Team', members: ['ann', 'bob'] });
  await client.put('/v1/groups/outside', { name: 'Outside', members: ['carl'] });
  return client;
}

async function createThread(client: ApiClient, threadID: string, groupID = 'team', location: Record<string, unknown> = { page: threadID }) {
  const author = groupID === 'team' ? 'ann' : 'carl';
  const response = await client.post('/v1/threads', { id: threadID, groupID, location, url: `https://example.com/${threadID}`, name: threadID });
  expect(response.status).toBe(200);
  return author;
}

async function createMessage(client: ApiClient, threadID: string, body: Record<string, unknown>): Promise<string> {
  const response = await client.post(messagesPath(threadID), { authorID: 'ann', content: paragraph(String(body.id ?? 'message')), ...body });
  expect(response.body).toMatchObject({ success: true });
  expect(response.status).toBe(200);
  return response.body.messageID;
}

/** `count` messages with ids `<prefix>-00`… and creation times one second apart from `start`. */
async function createMessages(client: ApiClient, threadID: string, count: number, prefix: string, start = Date.parse('2024-01-01T00:00:00Z')) {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const id = `${prefix}-${String(index).padStart(2, '0')}`;
    await createMessage(client, threadID, { id, createdTimestamp: new Date(start + index * 1000).toISOString() });
    ids.push(id);
  }
  return ids;
}

function list(client: ApiClient, query: { limit?: number | string; token?: string | null; filter?: unknown } = {}): Promise<ApiResponse<Listed>> {
  const params: string[] = [];
  if (query.limit !== undefined) params.push(`limit=${enc(String(query.limit))}`);
  if (query.token) params.push(`token=${enc(query.token)}`);
  if (query.filter !== undefined) params.push(`filter=${enc(typeof query.filter === 'string' ? query.filter : JSON.stringify(query.filter))}`);
  return client.get(`/v1/messages${params.length ? `?${params.join('&')}` : ''}`);
}

/** Follows tokens to the end; returns each page. */
async function allPages(client: ApiClient, limit: number, filter?: unknown, between?: (page: number) => Promise<void>): Promise<Listed[]> {
  const pages: Listed[] = [];
  let token: string | null = null;
  do {
    const response = await list(client, { limit, token, filter });
    expect(response.status).toBe(200);
    pages.push(response.body);
    token = response.body.pagination.token;
    if (between) await between(pages.length);
  } while (token && pages.length < 100);
  return pages;
}

const ids = (response: { messages: { id: string }[] }) => response.messages.map((message) => message.id);


describe('GET /v1/messages', () => {
  it('answers {messages, pagination} with every message of the application, oldest first, ties by ID', async () => {
    const client = await freshApplication();
    await createThread(client, 'first');
    await createThread(client, 'second');
    await createMessage(client, 'first', { id: 'late', createdTimestamp: '2024-03-03T00:00:00.000Z' });
    await createMessage(client, 'second', { id: 'early', createdTimestamp: '2024-01-01T00:00:00.000Z' });
    await createMessage(client, 'first', { id: 'tie-b', createdTimestamp: '2024-02-02T00:00:00.000Z' });
    await createMessage(client, 'second', { id: 'tie-a', createdTimestamp: '2024-02-02T00:00:00.000Z' });
    await createMessage(client, 'first', { id: 'tie-B', createdTimestamp: '2024-02-02T00:00:00.000Z' });
    const response = await list(client);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['messages', 'pagination']);
    expect(response.body.pagination).toEqual({ token: null, total: 5 });
    // IDs compare by code point: upper case before lower case.
    expect(ids(response.body)).toEqual(['early', 'tie-B', 'tie-a', 'tie-b', 'late']);
    const single = await client.get(`/v1/threads/first/messages/late`);
    expect(response.body.messages[4]).toEqual(single.body);
  });

  it('answers an empty page for an application without messages', async () => {
    const client = await freshApplication();
    const response = await list(client);
    expect(response.body).toEqual({ messages: [], pagination: { token: null, total: 0 } });
  });

  it('includes soft-deleted and action messages', async () => {
    const client = await freshApplication();
    await createThread(client, 'thread');
    await createMessage(client, 'thread', { id: 'deleted', deletedTimestamp: '2024-01-01T00:00:00.000Z' });
    await createMessage(client, 'thread', { id: 'action', type: 'action_message' });
    const response = await list(client);
    expect(response.body.pagination.total).toBe(2);
    expect(ids(response.body).sort()).toEqual(['action', 'deleted']);
  });

  describe('pagination', () => {
    it('returns every message exactly once across pages, with a token on each full page', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      const created = await createMessages(client, 'thread', 7, 'm');
      const pages = await allPages(client, 3);
      expect(pages.map((page) => page.messages.length)).toEqual([3, 3, 1]);
      expect(pages.map((page) => page.pagination.token === null)).toEqual([false, false, true]);
      expect(pages.map((page) => page.pagination.total)).toEqual([7, 7, 7]);
      expect(pages.flatMap(ids)).toEqual(created);
    });

    it('gives a token whenever the page is full, so the last page may be empty', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      const created = await createMessages(client, 'thread', 4, 'm');
      const pages = await allPages(client, 2);
      expect(pages.map((page) => page.messages.length)).toEqual([2, 2, 0]);
      expect(pages.map((page) => page.pagination.token === null)).toEqual([false, false, true]);
      expect(pages[2].pagination.total).toBe(4);
      expect(pages.flatMap(ids)).toEqual(created);
    });

    it('pages through messages that share one creation time by their IDs', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      const created: string[] = [];
      for (const id of ['e', 'a', 'd', 'b', 'c']) {
        await createMessage(client, 'thread', { id, createdTimestamp: '2024-05-05T05:05:05.123456Z' });
        created.push(id);
      }
      const pages = await allPages(client, 2);
      expect(pages.flatMap(ids)).toEqual(['a', 'b', 'c', 'd', 'e']);
    });

    it('lists no message twice and every earlier message once while messages are inserted between pages', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      const existing = await createMessages(client, 'thread', 6, 'old');
      const insertedLater: string[] = [];
      const insertedEarlier: string[] = [];
      const pages = await allPages(client, 2, undefined, async (page) => {
        // After each page: one message sorting after everything (now) and one before the cursor.
        const later = `new-${page}`;
        await createMessage(client, 'thread', { id: later });
        insertedLater.push(later);
        const earlier = `backdated-${page}`;
        await createMessage(client, 'thread', { id: earlier, createdTimestamp: '2023-01-01T00:00:00.000Z' });
        insertedEarlier.push(earlier);
      });
      const listed = pages.flatMap(ids);
      expect(new Set(listed).size).toBe(listed.length);
      for (const id of existing) expect(listed.filter((candidate) => candidate === id)).toHaveLength(1);
      expect(listed.slice(0, 6)).toEqual(existing);
      // Rows inserted meanwhile appear only when they sort after the cursor.
      for (const id of insertedEarlier) expect(listed).not.toContain(id);
      expect(listed.slice(6).every((id) => insertedLater.includes(id))).toBe(true);
    });

    it('continues a filtered listing with its token', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      for (let index = 0; index < 5; index++) {
        await createMessage(client, 'thread', { id: `even-${index}`, metadata: { parity: 'even' }, createdTimestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, index * 2)).toISOString() });
        await createMessage(client, 'thread', { id: `odd-${index}`, metadata: { parity: 'odd' }, createdTimestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, index * 2 + 1)).toISOString() });
      }
      const pages = await allPages(client, 2, { metadata: { parity: 'odd' } });
      expect(pages.flatMap(ids)).toEqual(['odd-0', 'odd-1', 'odd-2', 'odd-3', 'odd-4']);
      expect(pages.map((page) => page.pagination.total)).toEqual([5, 5, 5]);
    });

    it('returns an empty page with the right total and no token for limit 0', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      await createMessages(client, 'thread', 3, 'm');
      const response = await list(client, { limit: 0 });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ messages: [], pagination: { token: null, total: 3 } });
    });

    it('accepts a limit above 1000 and an empty limit', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      await createMessages(client, 'thread', 2, 'm');
      expect((await list(client, { limit: 5000 })).body.pagination).toEqual({ token: null, total: 2 });
      expect((await client.get('/v1/messages?limit=')).body.messages).toHaveLength(2);
    });

    it('rejects a limit that is not a non-negative integer with invalid_field', async () => {
      const client = await freshApplication();
      for (const limit of ['abc', '-1', '2.5', '10abc', ' ']) {
        expectError(await list(client, { limit }), 400, 'invalid_field', 'Limit must be a whole number from 0.');
      }
      expectError(await client.get('/v1/messages?limit=1&limit=2'), 400, 'invalid_field', 'Limit must be a whole number from 0.');
    });

    it('rejects a token that is not one of its own with invalid_field', async () => {
      const client = await freshApplication();
      const base64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
      for (const token of ['garbage!', base64({}), base64({ externalID: 'x' }), base64({ externalID: 'x', createdAtWithMicros: 'yesterday' }), base64([1])]) {
        expectError(await list(client, { token }), 400, 'invalid_field', 'Pagination token is not valid');
      }
      expectError(await client.get('/v1/messages?token=a&token=b'), 400, 'invalid_field', 'Pagination token should be of type string.');
    });
  });

  describe('filter', () => {
    it('matches metadata partially, with values of the same JSON type, and counts only matches', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      await createMessage(client, 'thread', { id: 'both', metadata: { color: 'red', size: 1, flag: true } });
      await createMessage(client, 'thread', { id: 'red', metadata: { color: 'red' } });
      await createMessage(client, 'thread', { id: 'string-one', metadata: { color: 'red', size: '1' } });
      await createMessage(client, 'thread', { id: 'none' });
      const red = await list(client, { filter: { metadata: { color: 'red' } } });
      expect(ids(red.body).sort()).toEqual(['both', 'red', 'string-one']);
      expect(red.body.pagination.total).toBe(3);
      const sized = await list(client, { filter: { metadata: { color: 'red', size: 1 } } });
      expect(ids(sized.body)).toEqual(['both']);
      expect(sized.body.pagination.total).toBe(1);
      expect(ids((await list(client, { filter: { metadata: { flag: true } } })).body)).toEqual(['both']);
      expect((await list(client, { filter: { metadata: { color: 'blue' } } })).body).toEqual({ messages: [], pagination: { token: null, total: 0 } });
    });

    it("matches the thread's location exactly, or partially with partialMatch", async () => {
      const client = await freshApplication();
      await createThread(client, 'docs-a', 'team', { page: 'docs', section: 'a' });
      await createThread(client, 'docs', 'team', { page: 'docs' });
      await createThread(client, 'home', 'team', { page: 'home', section: 'a' });
      await createMessage(client, 'docs-a', { id: 'in-docs-a' });
      await createMessage(client, 'docs', { id: 'in-docs' });
      await createMessage(client, 'home', { id: 'in-home' });
      expect(ids((await list(client, { filter: { location: { page: 'docs' } } })).body)).toEqual(['in-docs']);
      expect(ids((await list(client, { filter: { location: { value: { page: 'docs' }, partialMatch: false } } })).body)).toEqual(['in-docs']);
      const partial = await list(client, { filter: { location: { value: { page: 'docs' }, partialMatch: true } } });
      expect(ids(partial.body).sort()).toEqual(['in-docs', 'in-docs-a']);
      expect(partial.body.pagination.total).toBe(2);
      expect(ids((await list(client, { filter: { location: { value: { section: 'a' }, partialMatch: true } } })).body).sort()).toEqual(['in-docs-a', 'in-home']);
      expect(ids((await list(client, { filter: { location: { page: 'docs', section: 'a' } } })).body)).toEqual(['in-docs-a']);
    });

    it('filters by author; an unknown author is 401 user_not_found', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      await createMessage(client, 'thread', { id: 'by-ann' });
      await createMessage(client, 'thread', { id: 'by-bob', authorID: 'bob' });
      const byBob = await list(client, { filter: { authorID: 'bob' } });
      expect(ids(byBob.body)).toEqual(['by-bob']);
      expect(byBob.body.pagination.total).toBe(1);
      expect((await list(client, { filter: { authorID: 'carl' } })).body).toEqual({ messages: [], pagination: { token: null, total: 0 } });
      expectError(await list(client, { filter: { authorID: 'nobody' } }), 401, 'user_not_found');
    });

    it('filters by group (or its alias organizationID); an unknown group is 401 group_not_found', async () => {
      const client = await freshApplication();
      await createThread(client, 'team-thread', 'team');
      await createThread(client, 'outside-thread', 'outside');
      await createMessage(client, 'team-thread', { id: 'in-team' });
      await createMessage(client, 'outside-thread', { id: 'outside', authorID: 'carl' });
      const team = await list(client, { filter: { groupID: 'team' } });
      expect(ids(team.body)).toEqual(['in-team']);
      expect(team.body.pagination.total).toBe(1);
      expect(ids((await list(client, { filter: { organizationID: 'outside' } })).body)).toEqual(['outside']);
      expectError(await list(client, { filter: { groupID: 'no-such-group' } }), 401, 'group_not_found');
    });

    it('filters by thread, in pages of the thread; an unknown thread lists nothing', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      await createThread(client, 'other');
      const inThread = await createMessages(client, 'thread', 5, 'in');
      await createMessage(client, 'other', { id: 'elsewhere' });
      const pages = await allPages(client, 2, { threadID: 'thread' });
      expect(pages.map((page) => page.pagination.total)).toEqual([5, 5, 5]);
      expect(pages.flatMap(ids)).toEqual(inThread);
      expect((await list(client, { filter: { threadID: 'no-such-thread' } })).body).toEqual({ messages: [], pagination: { token: null, total: 0 } });
      expectError(await list(client, { filter: { threadID: 5 } }), 400, 'invalid_field', '"threadID" is not valid.');
    });

    it('combines filters with AND, also in the total', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread', 'team', { page: 'p' });
      await createThread(client, 'other', 'team', { page: 'q' });
      await createMessage(client, 'thread', { id: 'match', authorID: 'bob', metadata: { k: 'v' } });
      await createMessage(client, 'thread', { id: 'wrong-author', metadata: { k: 'v' } });
      await createMessage(client, 'other', { id: 'wrong-location', authorID: 'bob', metadata: { k: 'v' } });
      await createMessage(client, 'thread', { id: 'wrong-metadata', authorID: 'bob', metadata: { k: 'w' } });
      const response = await list(client, { filter: { authorID: 'bob', metadata: { k: 'v' }, location: { page: 'p' }, groupID: 'team' } });
      expect(response.body).toMatchObject({ pagination: { token: null, total: 1 } });
      expect(ids(response.body)).toEqual(['match']);
    });

    it('treats keys with falsy values as absent', async () => {
      const client = await freshApplication();
      await createThread(client, 'thread');
      await createMessages(client, 'thread', 2, 'm');
      const response = await list(client, { filter: { authorID: '', metadata: null, groupID: 0 } });
      expect(response.status).toBe(200);
      expect(response.body.pagination.total).toBe(2);
      expect((await list(client, { filter: '' })).body.pagination.total).toBe(2);
    });

    it('rejects a malformed filter with 400 invalid_field', async () => {
      const client = await freshApplication();
      const cases: [string, string][] = [
        ['{not json', 'The filter object must be a valid JSON object.'],
        ['[1]', 'The filter object must be a valid JSON object.'],
        ['42', 'The filter object must be a valid JSON object.'],
        ['"text"', 'The filter object must be a valid JSON object.'],
        ['null', 'The filter object must be a valid JSON object.'],
        ['{"resolvedStatus":"any"}', 'The filter object does not support "resolvedStatus" as a field.'],
        ['{"viewer":["mentioned"]}', 'The filter object does not support "viewer" as a field.'],
        ['{"firstMessageTimestamp":{"from":1}}', 'The filter object does not support "firstMessageTimestamp" as a field.'],
        ['{"color":"red"}', 'The filter object does not support "color" as a field.'],
        ['{"metadata":{"a":{"b":1}}}', '"metadata" must be valid JSON.'],
        ['{"metadata":"a=1"}', '"metadata" must be valid JSON.'],
        ['{"authorID":5}', '"authorID" is not valid.'],
        ['{"groupID":["team"]}', '"groupID" is not valid.'],
      ];
      for (const [filter, message] of cases) {
        expectError(await list(client, { filter }), 400, 'invalid_field', message);
      }
      for (const filter of ['{"location":"home"}', '{"location":{"value":{"a":1},"partialMatch":"yes"}}', '{"location":{"a":[1]}}']) {
        const response = await list(client, { filter });
        expectError(response, 400, 'invalid_field');
        expect((response.body as unknown as { message: string }).message).toMatch(/^"location" must be valid JSON\./);
      }
    });
  });

  it("never lists another application's messages", async () => {
    const mine = await freshApplication();
    const theirs = await freshApplication();
    await createThread(mine, 'same-thread');
    await createThread(theirs, 'same-thread');
    await createMessage(mine, 'same-thread', { id: 'same-id', metadata: { owner: 'mine' } });
    await createMessage(theirs, 'same-thread', { id: 'same-id', metadata: { owner: 'theirs' } });
    await createMessage(theirs, 'same-thread', { id: 'only-theirs' });
    const response = await list(mine);
    expect(response.body.pagination.total).toBe(1);
    expect(response.body.messages).toEqual([expect.objectContaining({ id: 'same-id', metadata: { owner: 'mine' } })]);
    expect((await list(mine, { filter: { metadata: { owner: 'theirs' } } })).body.pagination.total).toBe(0);
  });
});
