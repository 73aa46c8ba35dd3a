/**
 * GET /v1/threads through the gateway: order, pagination with Link and
 * X-Total-Count headers and ServerListThreadFilter.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApplication, request, type ApiClient, type ApiResponse, type TestApplication } from '../support/client.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;

const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];
const path = (threadId: string) => `/v1/threads/${encodeURIComponent(threadId)}`;
const filterQuery = (filter: unknown) => `filter=${encodeURIComponent(typeof filter === 'string' ? filter : JSON.stringify(filter))}`;

const tokens = new WeakMap<ApiClient, () => Promise<string>>();

/** A fresh application with users ann and bob in group `team`, and bob alone in `solo`. */
async function freshApplication(): Promise<ApiClient> {
  const app: TestApplication = await createApplication(system);
  const api = app.client;
  tokens.set(api, () => serverToken(app.id, app.secret));
  expect((await api.put('/v1/users/ann', { name: 'Ann' })).status).toBe(200);
  expect((await api.put('/v1/users/bob', { name: 'Bob' })).status).toBe(200);
  expect((await api.put('/v1/groups/team', { name: 'Team', members: ['ann', 'bob'] })).status).toBe(200);
  expect((await api.put('/v1/groups/solo', { name: 'Solo', members: ['bob'] })).status).toBe(200);
  return api;
}

function creation(extra: Record<string, unknown> = {}) {
  return { groupID: 'team', location: { page: 'list' }, url: 'https://example.com/list', name: 'Listed', ...extra };
}

async function postMessage(api: ApiClient, threadId: string, body: Record<string, unknown> = {}) {
  const response = await api.post(`${path(threadId)}/messages`, {
    authorID: 'ann',
    content: paragraph('hello'),
    createThread: creation(),
    ...body,
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.messageID as string;
}

async function createEmpty(api: ApiClient, id: string, extra: Record<string, unknown> = {}) {
  const response = await api.post('/v1/threads', { id, ...creation(extra) });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

async function list(api: ApiClient, query = ''): Promise<ApiResponse<any>> {
  return api.get(`/v1/threads${query ? `?${query}` : ''}`);
}

async function listIds(api: ApiClient, query = ''): Promise<string[]> {
  const response = await list(api, query);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(Array.isArray(response.body)).toBe(true);
  return response.body.map((thread: any) => thread.id);
}

/** The next-page path from a Link header, or null. */
function nextLink(response: ApiResponse): string | null {
  const link = response.headers.get('link');
  if (link === null) return null;
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(link);
  expect(match, link).not.toBeNull();
  return match![1];
}

/** Follows Link headers from `first` until the last page; returns the pages. */
async function allPages(api: ApiClient, first: string, between?: (page: number) => Promise<void>) {
  const token = await tokens.get(api)!();
  const pages: ApiResponse<any>[] = [];
  let next: string | null = first;
  while (next !== null) {
    const response: ApiResponse<any> = await request(system.url, 'GET', next, { token });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    pages.push(response);
    next = nextLink(response);
    expect(pages.length).toBeLessThan(50);
    if (next !== null && between) await between(pages.length);
  }
  return pages;
}

systemForFile((started) => (system = started));

describe('the list', () => {
  let api: ApiClient;

  beforeAll(async () => {
    api = await freshApplication();
  });

  it('is an empty array with X-Total-Count 0 and no Link for an application without threads', async () => {
    const response = await list(api);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
    expect(response.headers.get('x-total-count')).toBe('0');
    expect(response.headers.get('link')).toBeNull();
  });

  it('contains full thread objects', async () => {
    await postMessage(api, 'full', { createThread: creation({ metadata: { k: 'v' } }) });
    const response = await list(api);
    expect(response.body).toHaveLength(1);
    expect(response.body[0]).toEqual((await api.get(path('full'))).body);
  });
});

describe('order', () => {
  let api: ApiClient;

  beforeAll(async () => {
    api = await freshApplication();
  });

  it('puts the thread with the latest message first; an empty thread counts from its creation', async () => {
    await postMessage(api, 'jan-01', { createdTimestamp: '2024-01-01T00:00:00.000Z' });
    await postMessage(api, 'jan-03', { createdTimestamp: '2024-01-03T00:00:00.000Z' });
    await postMessage(api, 'jan-02', { createdTimestamp: '2024-01-02T00:00:00.000Z' });
    await createEmpty(api, 'empty-now');
    expect(await listIds(api)).toEqual(['empty-now', 'jan-03', 'jan-02', 'jan-01']);
  });

  it('moves a thread to the top when a message is posted to it', async () => {
    await postMessage(api, 'jan-01', { authorID: 'bob' });
    expect(await listIds(api)).toEqual(['jan-01', 'empty-now', 'jan-03', 'jan-02']);
  });

  it('orders by the latest message, not the latest posted, and counts soft-deleted and action messages', async () => {
    // A back-dated reply does not move jan-02 past jan-03.
    await postMessage(api, 'jan-02', { createdTimestamp: '2024-01-02T12:00:00.000Z' });
    expect(await listIds(api)).toEqual(['jan-01', 'empty-now', 'jan-03', 'jan-02']);
    // A soft-deleted message still counts.
    const late = await postMessage(api, 'jan-02', { createdTimestamp: '2024-01-04T00:00:00.000Z' });
    expect((await api.put(`${path('jan-02')}/messages/${encodeURIComponent(late)}`, { deleted: true })).status).toBe(200);
    expect(await listIds(api)).toEqual(['jan-01', 'empty-now', 'jan-02', 'jan-03']);
    // A resolve action message is new activity.
    expect((await api.put(path('jan-03'), { resolved: true, userID: 'bob' })).status).toBe(200);
    expect(await listIds(api)).toEqual(['jan-03', 'jan-01', 'empty-now', 'jan-02']);
  });

  it('does not count a reaction as activity', async () => {
    const [oldest] = (await api.get(`${path('jan-02')}/messages?sortDirection=ascending`)).body;
    const reacted = await api.put(`${path('jan-02')}/messages/${encodeURIComponent(oldest.id)}`, {
      addReactions: [{ reaction: '👍', userID: 'bob' }],
    });
    expect(reacted.status).toBe(200);
    expect(await listIds(api)).toEqual(['jan-03', 'jan-01', 'empty-now', 'jan-02']);
  });

  it('breaks ties by id', async () => {
    for (const id of ['tie-b', 'tie-c', 'tie-a'])
      await postMessage(api, id, { createdTimestamp: '2023-06-01T00:00:00.000Z' });
    const ids = await listIds(api);
    expect(ids.slice(-3)).toEqual(['tie-a', 'tie-b', 'tie-c']);
  });

  it('is the same order page by page', async () => {
    const everything = await listIds(api);
    const pages = await allPages(api, '/v1/threads?limit=2');
    expect(pages.flatMap((page) => page.body.map((thread: any) => thread.id))).toEqual(everything);
  });
});

describe('order after message changes', () => {
  it('moves a thread back when its latest message is deleted or back-dated', async () => {
    const api = await freshApplication();
    await postMessage(api, 'a', { createdTimestamp: '2024-01-01T00:00:00.000Z' });
    const movable = await postMessage(api, 'a', { createdTimestamp: '2024-01-05T00:00:00.000Z' });
    const latest = await postMessage(api, 'a', { createdTimestamp: '2024-01-06T00:00:00.000Z' });
    await postMessage(api, 'b', { createdTimestamp: '2024-01-03T00:00:00.000Z' });
    expect(await listIds(api)).toEqual(['a', 'b']);

    expect((await api.delete(`${path('a')}/messages/${encodeURIComponent(latest)}`)).status).toBe(200);
    expect(await listIds(api)).toEqual(['a', 'b']);
    const moved = await api.put(`${path('a')}/messages/${encodeURIComponent(movable)}`, {
      createdTimestamp: '2024-01-02T00:00:00.000Z',
    });
    expect(moved.status).toBe(200);
    expect(await listIds(api)).toEqual(['b', 'a']);
  });
});

describe('pagination', () => {
  let api: ApiClient;
  const ids = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7'];

  beforeAll(async () => {
    api = await freshApplication();
    for (const id of ids) await createEmpty(api, id);
  });

  it('pages with limit, with a Link to the next page until the last one and X-Total-Count on every page', async () => {
    const pages = await allPages(api, '/v1/threads?limit=3');
    expect(pages.map((page) => page.body.length)).toEqual([3, 3, 1]);
    expect(pages.map((page) => page.headers.get('x-total-count'))).toEqual(['7', '7', '7']);
    expect(pages.map((page) => page.headers.get('link') !== null)).toEqual([true, true, false]);
    const seen = pages.flatMap((page) => page.body.map((thread: any) => thread.id));
    expect([...seen].sort()).toEqual(ids);
    // Newest first: created last, listed first.
    expect(seen).toEqual([...ids].reverse());
  });

  it('puts the page size and the token in the Link, keeping the other parameters', async () => {
    const response = await list(api, `limit=2&${filterQuery({ groupID: 'team' })}`);
    const next = nextLink(response)!;
    const url = new URL(next, 'http://x');
    expect(url.pathname).toBe('/v1/threads');
    expect(url.searchParams.get('limit')).toBe('2');
    expect(JSON.parse(url.searchParams.get('filter')!)).toEqual({ groupID: 'team' });
    expect(url.searchParams.get('token')).toEqual(expect.any(String));
  });

  it('gives no Link when the page holds exactly the remaining threads', async () => {
    const response = await list(api, 'limit=7');
    expect(response.body).toHaveLength(7);
    expect(response.headers.get('link')).toBeNull();
    const pages = await allPages(api, '/v1/threads?limit=6');
    expect(pages.map((page) => page.body.length)).toEqual([6, 1]);
  });

  it('answers an empty page with the total for limit=0', async () => {
    const response = await list(api, 'limit=0');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
    expect(response.headers.get('x-total-count')).toBe('7');
  });

  it('lists everything without limit', async () => {
    const response = await list(api);
    expect(response.body).toHaveLength(7);
    expect(response.headers.get('x-total-count')).toBe('7');
    expect(response.headers.get('link')).toBeNull();
  });

  it('answers 400 invalid_field for a limit that is not a non-negative integer', async () => {
    for (const limit of ['abc', '-1', '1.5', '2x', '1&limit=2']) {
      const response = await list(api, `limit=${limit}`);
      expect(response.status, limit).toBe(400);
      expect(response.body.error).toBe('invalid_field');
    }
  });

  it('answers 400 invalid_field for a token that is not one of its own', async () => {
    const base64 = (value: unknown) => encodeURIComponent(Buffer.from(JSON.stringify(value)).toString('base64'));
    for (const token of [
      'not-a-token!!',
      base64({}),
      base64('p1'),
      base64({ externalID: 'p1' }),
      base64({ externalID: 'p1', nextCursorTimestamp: 'yesterday' }),
      base64({ externalID: '', nextCursorTimestamp: '2024-01-01 00:00:00.000000' }),
      `${base64({ externalID: 'p1', nextCursorTimestamp: '2024-01-01 00:00:00.000000' })}&token=again`,
    ]) {
      const response = await list(api, `token=${token}`);
      expect(response.status, token).toBe(400);
      expect(response.body.error).toBe('invalid_field');
    }
  });

  it('accepts the token pasted into the query string unencoded', async () => {
    const first = await list(api, 'limit=3');
    const token = new URL(nextLink(first)!, 'http://x').searchParams.get('token')!;
    const [, expected] = await allPages(api, '/v1/threads?limit=3');
    // A raw `+` in a query string arrives as a space.
    const pasted = await list(api, `limit=3&token=${token}`);
    expect(pasted.status).toBe(200);
    expect(pasted.body.map((thread: any) => thread.id)).toEqual(expected.body.map((thread: any) => thread.id));
  });
});

describe('pagination while threads are being created', () => {
  it('lists every thread that existed before the first page exactly once and none twice', async () => {
    const api = await freshApplication();
    const before = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];
    for (const id of before) await createEmpty(api, id);
    for (const id of ['m1', 'm2']) await postMessage(api, id);
    const existing = [...before, 'm1', 'm2'];

    let n = 0;
    const created: string[] = [];
    const pages = await allPages(api, '/v1/threads?limit=3', async () => {
      // New threads, by both ways of creating one, between every two pages.
      n += 1;
      await createEmpty(api, `new-empty-${n}`);
      await postMessage(api, `new-message-${n}`);
      created.push(`new-empty-${n}`, `new-message-${n}`);
    });

    const seen = pages.flatMap((page) => page.body.map((thread: any) => thread.id));
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of existing) expect(seen.filter((candidate) => candidate === id), id).toHaveLength(1);
    // New threads have the newest activity, so they sort before the cursor and stay off later pages.
    expect(seen.filter((id) => created.includes(id))).toEqual([]);
    expect(created.length).toBeGreaterThan(0);
  });
});

describe('the default page size', () => {
  it('is 1000, and a larger limit is clamped to 1000', async () => {
    const api = await freshApplication();
    const total = 1003;
    const queue = Array.from({ length: total }, (_, index) => `bulk-${String(index).padStart(4, '0')}`);
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) await createEmpty(api, id);
      }),
    );
    const first = await list(api);
    expect(first.body).toHaveLength(1000);
    expect(first.headers.get('x-total-count')).toBe(String(total));
    const pages = await allPages(api, nextLink(first)!);
    expect(pages.map((page) => page.body.length)).toEqual([3]);
    const clamped = await list(api, 'limit=5000');
    expect(clamped.body).toHaveLength(1000);
    expect(nextLink(clamped)).not.toBeNull();
  }, 120_000);
});

describe('filters', () => {
  let api: ApiClient;
  let beforeEmpty: string;

  beforeAll(async () => {
    api = await freshApplication();
    // f1: team, resolved, messages on Jan 1 and Jan 10.
    await postMessage(api, 'f1', {
      createdTimestamp: '2024-01-01T00:00:00.000Z',
      createThread: creation({ location: { page: 'docs', section: 'a' }, metadata: { team: 'red', priority: 1, open: true } }),
    });
    await postMessage(api, 'f1', { createdTimestamp: '2024-01-10T00:00:00.000Z' });
    expect((await api.put(path('f1'), { resolved: true })).status).toBe(200);
    // f2: solo, one message on Jan 5.
    await postMessage(api, 'f2', {
      authorID: 'bob',
      createdTimestamp: '2024-01-05T00:00:00.000Z',
      createThread: creation({ groupID: 'solo', location: { page: 'docs', section: 'b' }, metadata: { team: 'blue', priority: 2 } }),
    });
    // f4: solo, one message on Feb 1.
    await postMessage(api, 'f4', {
      authorID: 'bob',
      createdTimestamp: '2024-02-01T00:00:00.000Z',
      createThread: creation({ groupID: 'solo', location: { page: 'docs' } }),
    });
    // f3: team, no messages, created now.
    beforeEmpty = new Date(Date.now() - 1).toISOString();
    await createEmpty(api, 'f3', { location: { page: 'home' }, metadata: { team: 'red' } });
  });

  const ids = async (filter: unknown) => [...(await listIds(api, filterQuery(filter)))].sort();

  it('matches location exactly', async () => {
    expect(await ids({ location: { page: 'docs' } })).toEqual(['f4']);
    expect(await ids({ location: { section: 'a', page: 'docs' } })).toEqual(['f1']);
    expect(await ids({ location: { value: { page: 'docs' }, partialMatch: false } })).toEqual(['f4']);
    expect(await ids({ location: { page: 'nowhere' } })).toEqual([]);
  });

  it('matches location partially with partialMatch: true', async () => {
    expect(await ids({ location: { value: { page: 'docs' }, partialMatch: true } })).toEqual(['f1', 'f2', 'f4']);
    expect(await ids({ location: { value: { section: 'b' }, partialMatch: true } })).toEqual(['f2']);
  });

  it('matches metadata by containment, with the same JSON types', async () => {
    expect(await ids({ metadata: { team: 'red' } })).toEqual(['f1', 'f3']);
    expect(await ids({ metadata: { team: 'red', priority: 1 } })).toEqual(['f1']);
    expect(await ids({ metadata: { priority: '1' } })).toEqual([]);
    expect(await ids({ metadata: { open: true } })).toEqual(['f1']);
  });

  it('matches the group by groupID or organizationID', async () => {
    expect(await ids({ groupID: 'team' })).toEqual(['f1', 'f3']);
    expect(await ids({ organizationID: 'solo' })).toEqual(['f2', 'f4']);
  });

  it('answers 401 group_not_found for an unknown group', async () => {
    for (const filter of [{ groupID: 'no-such-group' }, { organizationID: 'no-such-group' }]) {
      const response = await list(api, filterQuery(filter));
      expect(response.status).toBe(401);
      expect(response.body.error).toBe('group_not_found');
    }
  });

  it('filters by resolvedStatus, any by default', async () => {
    expect(await ids({ resolvedStatus: 'resolved' })).toEqual(['f1']);
    expect(await ids({ resolvedStatus: 'unresolved' })).toEqual(['f2', 'f3', 'f4']);
    expect(await ids({ resolvedStatus: 'any' })).toEqual(['f1', 'f2', 'f3', 'f4']);
    expect(await ids({})).toEqual(['f1', 'f2', 'f3', 'f4']);
  });

  it('answers 400 invalid_field for another resolvedStatus', async () => {
    for (const resolvedStatus of ['open', 'RESOLVED', 1, true]) {
      const response = await list(api, filterQuery({ resolvedStatus }));
      expect(response.status, String(resolvedStatus)).toBe(400);
      expect(response.body.error).toBe('invalid_field');
      expect(response.body.message).toContain('resolvedStatus');
    }
  });

  it('filters by an inclusive range on the first message, or the creation of an empty thread', async () => {
    expect(await ids({ firstMessageTimestamp: { from: '2024-01-01T00:00:00.000Z', to: '2024-01-05T00:00:00.000Z' } })).toEqual([
      'f1',
      'f2',
    ]);
    expect(await ids({ firstMessageTimestamp: { from: '2024-01-01T00:00:00.001Z' } })).toEqual(['f2', 'f3', 'f4']);
    expect(await ids({ firstMessageTimestamp: { to: '2024-01-01T00:00:00.000Z' } })).toEqual(['f1']);
    expect(await ids({ firstMessageTimestamp: { from: beforeEmpty } })).toEqual(['f3']);
    // Numbers are accepted as Date values.
    expect(await ids({ firstMessageTimestamp: { to: Date.parse('2024-01-05T00:00:00.000Z') } })).toEqual(['f1', 'f2']);
  });

  it('filters by an inclusive range on the latest message, never matching threads without messages', async () => {
    expect(await ids({ mostRecentMessageTimestamp: { from: '2024-01-10T00:00:00.000Z' } })).toEqual(['f1', 'f4']);
    expect(await ids({ mostRecentMessageTimestamp: { to: '2024-01-05T00:00:00.000Z' } })).toEqual(['f2']);
    expect(await ids({ mostRecentMessageTimestamp: { from: '2000-01-01T00:00:00.000Z' } })).toEqual(['f1', 'f2', 'f4']);
    expect(await ids({ mostRecentMessageTimestamp: { from: beforeEmpty } })).toEqual([]);
  });

  it('answers 400 invalid_field for malformed timestamp ranges', async () => {
    for (const field of ['firstMessageTimestamp', 'mostRecentMessageTimestamp']) {
      for (const value of ['2024-01-01', {}, { from: 'not a date' }, { to: true }, { from: '2024-01-01', until: '2024-02-01' }, [1]]) {
        const response = await list(api, filterQuery({ [field]: value }));
        expect(response.status, `${field}: ${JSON.stringify(value)}`).toBe(400);
        expect(response.body.error).toBe('invalid_field');
      }
    }
  });

  it('combines filters with AND and counts only matches in X-Total-Count', async () => {
    const response = await list(api, filterQuery({ groupID: 'team', resolvedStatus: 'unresolved' }));
    expect(response.body.map((thread: any) => thread.id)).toEqual(['f3']);
    expect(response.headers.get('x-total-count')).toBe('1');
    const docs = await list(api, `limit=1&${filterQuery({ location: { value: { page: 'docs' }, partialMatch: true } })}`);
    expect(docs.headers.get('x-total-count')).toBe('3');
  });

  it('keeps the filter across pages', async () => {
    const pages = await allPages(api, `/v1/threads?limit=1&${filterQuery({ metadata: { team: 'red' } })}`);
    expect(pages.map((page) => page.body.map((thread: any) => thread.id))).toEqual([['f3'], ['f1']]);
  });

  it('answers 400 invalid_field for an unknown filter key, naming it', async () => {
    const response = await list(api, filterQuery({ color: 'red' }));
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_field');
    expect(response.body.message).toContain('color');
  });

  it('rejects authorID and viewer on this endpoint, naming them', async () => {
    for (const key of ['authorID', 'viewer']) {
      const response = await list(api, filterQuery({ [key]: 'ann' }));
      expect(response.status, key).toBe(400);
      expect(response.body.error).toBe('invalid_field');
      expect(response.body.message).toContain(key);
    }
  });

  it('answers 400 invalid_field for a filter that is not a JSON object, or a malformed location or metadata', async () => {
    for (const filter of ['{not json', '"text"', '[1]', '42', 'null', { location: 'docs' }, { location: { value: { page: { x: 1 } }, partialMatch: true } }, { metadata: { a: [1] } }, { groupID: 5 }]) {
      const response = await list(api, filterQuery(filter));
      expect(response.status, JSON.stringify(filter)).toBe(400);
      expect(response.body.error).toBe('invalid_field');
    }
  });

  it('treats filter keys with falsy values as absent', async () => {
    expect(await ids({ groupID: '', resolvedStatus: '', location: null, metadata: 0, firstMessageTimestamp: false })).toEqual([
      'f1',
      'f2',
      'f3',
      'f4',
    ]);
  });

  it('serves the list with a trailing slash too', async () => {
    const response = await api.get(`/v1/threads/?${filterQuery({ groupID: 'team' })}`);
    expect(response.status).toBe(200);
    expect(response.body.map((thread: any) => thread.id).sort()).toEqual(['f1', 'f3']);
  });

  it('ignores unknown query parameters', async () => {
    expect((await list(api, 'notafilter=x&sortDirection=ascending')).status).toBe(200);
  });
});
