/**
 * GET /v1/users through the gateway: shape, order, keyset pagination, limit, token and filter. Every test lists a
 * fresh application, so the list content is known.
 */
import { describe, expect, it } from 'vitest';
import { createApplication, uniqueId, type ApiClient, type ApiResponse, type TestApplication } from '../support/client.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { expectError } from '../support/expect.js';

let system: TestSystem;

systemForFile((started) => (system = started));

const ISO_WITH_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface ListedUser {
  id: string;
  [key: string]: unknown;
}

/** Code-point order (UTF-8 byte order is the same order). */
function codePointCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

async function freshApplication(): Promise<TestApplication> {
  return createApplication(system, uniqueId('list app'));
}

async function putUsers(client: ApiClient, users: Record<string, object>): Promise<void> {
  for (const [id, body] of Object.entries(users)) {
    const response = await client.put(`/v1/users/${encodeURIComponent(id)}`, body);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }
}

/** Inserts `count` bare users straight into the database: u00001, u00002, … */
async function insertUsers(applicationId: string, count: number, prefix = 'u'): Promise<void> {
  await system.sql.query(
    `INSERT INTO identity.users (application_id, external_id)
     SELECT $1, $2 || lpad(i::text, 5, '0') FROM generate_series(1, $3::int) AS i`,
    [applicationId, prefix, count],
  );
}

function list(client: ApiClient, query: Record<string, string> = {}): Promise<ApiResponse> {
  const search = new URLSearchParams(query).toString();
  return client.get(`/v1/users${search ? `?${search}` : ''}`);
}

const ids = (response: ApiResponse): string[] => response.body.users.map((user: ListedUser) => user.id);

/** Follows the tokens to the end; returns every page. */
async function allPages(client: ApiClient, query: Record<string, string>): Promise<ApiResponse[]> {
  const pages: ApiResponse[] = [];
  let token: string | null = null;
  do {
    const page = await list(client, token ? { ...query, token } : query);
    expect(page.status).toBe(200);
    pages.push(page);
    token = page.body.pagination.token;
    expect(pages.length).toBeLessThan(100);
  } while (token);
  return pages;
}


describe('GET /v1/users: shape and order', () => {
  it('answers {users: [], pagination: {token: null, total: 0}} for an application without users', async () => {
    const { client } = await freshApplication();
    const response = await list(client);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ users: [], pagination: { token: null, total: 0 } });
  });

  it('lists every user with the list fields of the user object', async () => {
    const { client } = await freshApplication();
    const fullFields = {
      name: 'Full',
      email: 'full@example.com',
      shortName: 'F',
      status: 'deleted',
      profilePictureURL: 'https://example.com/f.png',
      metadata: { a: 1, b: 'two', c: false },
    };
    await putUsers(client, { full: fullFields, bare: {} });
    const response = await list(client);
    expect(response.status).toBe(200);
    expect(response.body.pagination).toEqual({ token: null, total: 2 });
    const [bare, full] = response.body.users;
    expect(bare).toMatchObject({
      id: 'bare',
      name: null,
      email: null,
      shortName: null,
      status: 'active',
      profilePictureURL: null,
      metadata: {},
    });
    expect(full).toMatchObject({ id: 'full', ...fullFields });
    for (const user of response.body.users) expect(user.createdTimestamp).toMatch(ISO_WITH_MILLIS);
  });

  it('lists each user exactly as GET /v1/users/<ID> answers it, without the groups', async () => {
    const { client } = await freshApplication();
    await putUsers(client, {
      quoted: { name: 'O\'Brien "the \\ first" 😀', email: 'o@example.com', metadata: { n: 1.5, big: 12345678901, t: true, s: 'ü\n\t' } },
      plain: { name: 'Plain', email: 'p@example.com', short_name: 'P', profile_picture_url: 'https://example.com/p.png' },
    });
    const listed = (await list(client)).body.users as ListedUser[];
    expect(listed.map((user) => user.id)).toEqual(['plain', 'quoted']);
    for (const user of listed) {
      const { groups, organizations, groupIDsWithLinkedChatProfile, groupIDsWithLinkedSlackProfile, ...single } = (
        await client.get(`/v1/users/${user.id}`)
      ).body;
      expect([groups, organizations, groupIDsWithLinkedChatProfile, groupIDsWithLinkedSlackProfile]).toEqual([[], [], [], []]);
      expect(Object.keys(user)).toEqual(Object.keys(single));
      expect(user).toEqual(single);
    }
  });

  it('orders users by the code-point order of their IDs', async () => {
    const { client } = await freshApplication();
    // Locale order would put "a" before "B"; UTF-16 order would put the emoji before "Ａ" (U+FF21).
    const userIds = ['b', 'a', 'B', 'A', '10', '9', 'é', 'e', 'Ａ', '😀', 'a b', 'a-b', 'ab', 'z'];
    await putUsers(client, Object.fromEntries(userIds.map((id) => [id, {}])));
    const response = await list(client);
    expect(ids(response)).toEqual([...userIds].sort(codePointCompare));
    expect(ids(response).indexOf('Ａ')).toBeLessThan(ids(response).indexOf('😀'));
    expect(response.body.pagination.total).toBe(userIds.length);
  });

  it('walks the code-point order page by page with limit=1', async () => {
    const { client } = await freshApplication();
    const userIds = ['b', 'B', '10', '9', 'é', 'e', 'Ａ', '😀', 'a b', 'ab', 'ü>', 'ü?'];
    await putUsers(client, Object.fromEntries(userIds.map((id) => [id, {}])));
    const pages = await allPages(client, { limit: '1' });
    expect(pages.flatMap(ids)).toEqual([...userIds].sort(codePointCompare));
    expect(pages).toHaveLength(userIds.length);
  });

  it('lists users of every status', async () => {
    const { client } = await freshApplication();
    await putUsers(client, { one: { status: 'active' }, two: { status: 'deleted' } });
    const response = await list(client);
    expect(response.body.users.map((user: ListedUser) => [user.id, user.status])).toEqual([
      ['one', 'active'],
      ['two', 'deleted'],
    ]);
  });
});

describe('GET /v1/users: pagination', () => {
  it('returns every user exactly once across pages, with the total on every page and a null token at the end', async () => {
    const { client } = await freshApplication();
    const userIds = Array.from({ length: 7 }, (_, index) => `user-${index}`);
    await putUsers(client, Object.fromEntries(userIds.map((id) => [id, {}])));

    const pages = await allPages(client, { limit: '3' });
    expect(pages.map((page) => ids(page).length)).toEqual([3, 3, 1]);
    expect(pages.flatMap(ids)).toEqual(userIds);
    for (const page of pages) expect(page.body.pagination.total).toBe(7);
    expect(pages[0].body.pagination.token).toEqual(expect.any(String));
    expect(pages[2].body.pagination.token).toBeNull();
  });

  it('gives no token when the last page is exactly full', async () => {
    const { client } = await freshApplication();
    await putUsers(client, { a: {}, b: {}, c: {}, d: {} });
    const pages = await allPages(client, { limit: '2' });
    expect(pages.map(ids)).toEqual([['a', 'b'], ['c', 'd']]);
    expect(pages[1].body.pagination.token).toBeNull();
  });

  it('issues a token that is base64 JSON carrying the last ID of the page', async () => {
    const { client } = await freshApplication();
    await putUsers(client, { a: {}, b: {}, c: {} });
    const page = await list(client, { limit: '2' });
    const decoded = JSON.parse(Buffer.from(page.body.pagination.token, 'base64').toString('utf8'));
    expect(decoded).toMatchObject({ externalID: 'b' });
  });

  it('continues after a hand-made token holding any ID', async () => {
    const { client } = await freshApplication();
    await putUsers(client, { a: {}, b: {}, c: {}, d: {} });
    const token = Buffer.from(JSON.stringify({ externalID: 'bb' })).toString('base64');
    const response = await list(client, { token });
    expect(ids(response)).toEqual(['c', 'd']);
    expect(response.body.pagination).toEqual({ token: null, total: 4 });
  });

  it('reads a token pasted unencoded, where + arrived as a space', async () => {
    const { client } = await freshApplication();
    // The base64 of this JSON contains "+".
    const externalID = 'ü>';
    const token = Buffer.from(JSON.stringify({ externalID })).toString('base64');
    expect(token).toContain('+');
    await putUsers(client, { [externalID]: {}, 'ü?': {} });
    const response = await client.get(`/v1/users?token=${token}`);
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(['ü?']);
  });

  it('stays correct when users are inserted between page requests', async () => {
    const { client } = await freshApplication();
    const original = ['b', 'd', 'f', 'h', 'j', 'l'];
    await putUsers(client, Object.fromEntries(original.map((id) => [id, {}])));

    const first = await list(client, { limit: '2' });
    expect(ids(first)).toEqual(['b', 'd']);
    // One sorts before the cursor, one between pages, one at the very end.
    await putUsers(client, { a: {}, e: {}, z: {} });
    const second = await list(client, { limit: '2', token: first.body.pagination.token });
    await putUsers(client, { c: {}, g: {} });
    const rest = await allPages(client, { limit: '2', token: second.body.pagination.token });
    const seen = [...ids(first), ...ids(second), ...rest.flatMap(ids)];

    expect(new Set(seen).size).toBe(seen.length);
    for (const id of original) expect(seen.filter((seen) => seen === id)).toHaveLength(1);
    expect(seen).toEqual([...seen].sort(codePointCompare));
    // Rows inserted meanwhile appear only if they sort after the cursor.
    expect(seen).not.toContain('a');
    expect(seen).not.toContain('c');
    expect(seen).toContain('e');
    expect(seen).toContain('z');
  });

  it('does not repeat or skip users when a user of an earlier page is deleted between pages', async () => {
    const { client } = await freshApplication();
    await putUsers(client, { a: {}, b: {}, c: {}, d: {}, e: {} });
    const first = await list(client, { limit: '2' });
    const deleted = await client.delete('/v1/users/a', { permanently_delete: true });
    expect(deleted.status).toBe(200);
    const rest = await allPages(client, { limit: '2', token: first.body.pagination.token });
    expect([...ids(first), ...rest.flatMap(ids)]).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(rest[0].body.pagination.total).toBe(4);
  });
});

describe('GET /v1/users: limit', () => {
  it('returns an empty page with the correct total for limit=0', async () => {
    const { client } = await freshApplication();
    await putUsers(client, { a: {}, b: {}, c: {} });
    const response = await list(client, { limit: '0' });
    expect(response.status).toBe(200);
    expect(response.body.users).toEqual([]);
    expect(response.body.pagination.total).toBe(3);
  });

  it('defaults to 1000 and clamps larger limits to 1000 without losing users', async () => {
    const application = await freshApplication();
    await insertUsers(application.id, 1005);

    const byDefault = await list(application.client);
    expect(byDefault.body.users).toHaveLength(1000);
    expect(byDefault.body.pagination.total).toBe(1005);
    expect(byDefault.body.pagination.token).toEqual(expect.any(String));

    const clamped = await list(application.client, { limit: '5000' });
    expect(clamped.status).toBe(200);
    expect(clamped.body.users).toHaveLength(1000);
    expect(clamped.body.pagination.total).toBe(1005);
    expect(ids(clamped)[999]).toBe('u01000');

    const next = await list(application.client, { limit: '5000', token: clamped.body.pagination.token });
    expect(ids(next)).toEqual(['u01001', 'u01002', 'u01003', 'u01004', 'u01005']);
    expect(next.body.pagination).toEqual({ token: null, total: 1005 });
  });

  it('accepts limit=1000 exactly and an empty limit as the default', async () => {
    const application = await freshApplication();
    await insertUsers(application.id, 3);
    expect(ids(await list(application.client, { limit: '1000' }))).toEqual(['u00001', 'u00002', 'u00003']);
    expect(ids(await list(application.client, { limit: '' }))).toEqual(['u00001', 'u00002', 'u00003']);
  });

  it.each([
    ['not a number', 'limit=abc'],
    ['negative', 'limit=-1'],
    ['a fraction', 'limit=1.5'],
    ['digits followed by letters', 'limit=10abc'],
    ['repeated', 'limit=1&limit=2'],
  ])('answers 400 invalid_field "Limit must be a whole number from 0." when limit is %s', async (_case, query) => {
    const { client } = await freshApplication();
    const response = await client.get(`/v1/users?${query}`);
    expectError(response, 400, 'invalid_field', 'Limit must be a whole number from 0.');
  });
});

describe('GET /v1/users: token validation', () => {
  const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

  it.each([
    ['not base64 JSON', 'not-a-token!!'],
    ['base64 of text that is not JSON', base64('hello world')],
    ['base64 JSON without externalID', base64(JSON.stringify({ userID: 'a' }))],
    ['base64 JSON with an empty externalID', base64(JSON.stringify({ externalID: '' }))],
    ['base64 JSON with a numeric externalID', base64(JSON.stringify({ externalID: 5 }))],
    ['base64 of a JSON array', base64(JSON.stringify(['a']))],
  ])('answers 400 invalid_field when the token is %s', async (_case, token) => {
    const { client } = await freshApplication();
    const response = await list(client, { token });
    expectError(response, 400, 'invalid_field', 'Pagination token is not valid');
  });

  it('answers 400 invalid_field when the token carries text the database cannot compare', async () => {
    const { client } = await freshApplication();
    for (const externalID of ['a\u0000', 'b\ud800']) {
      const response = await list(client, { token: base64(JSON.stringify({ externalID })) });
      expectError(response, 400, 'invalid_field', 'Pagination token is not valid');
    }
  });

  it('answers 400 invalid_field when the token is repeated', async () => {
    const { client } = await freshApplication();
    const token = encodeURIComponent(base64(JSON.stringify({ externalID: 'a' })));
    const response = await client.get(`/v1/users?token=${token}&token=${token}`);
    expectError(response, 400, 'invalid_field', 'Pagination token should be of type string.');
  });
});

describe('GET /v1/users: filter', () => {
  const filter = (value: unknown) => ({ filter: typeof value === 'string' ? value : JSON.stringify(value) });

  async function filterFixture(): Promise<TestApplication> {
    const application = await freshApplication();
    await putUsers(application.client, {
      u1: { metadata: { team: 'red', level: 1, admin: true } },
      u2: { metadata: { team: 'red', level: 2 } },
      u3: { metadata: { team: 'blue', level: 1 } },
      u4: { metadata: { level: '1' } },
      u5: {},
    });
    return application;
  }

  it('matches users whose metadata contains every given key and value', async () => {
    const { client } = await filterFixture();
    const red = await list(client, filter({ metadata: { team: 'red' } }));
    expect(ids(red)).toEqual(['u1', 'u2']);
    expect(red.body.pagination).toEqual({ token: null, total: 2 });

    const redLevel1 = await list(client, filter({ metadata: { team: 'red', level: 1 } }));
    expect(ids(redLevel1)).toEqual(['u1']);
    expect(ids(await list(client, filter({ metadata: { admin: true } })))).toEqual(['u1']);
  });

  it('compares values with their JSON type: 1 does not match "1"', async () => {
    const { client } = await filterFixture();
    expect(ids(await list(client, filter({ metadata: { level: 1 } })))).toEqual(['u1', 'u3']);
    expect(ids(await list(client, filter({ metadata: { level: '1' } })))).toEqual(['u4']);
    expect(ids(await list(client, filter({ metadata: { admin: 'true' } })))).toEqual([]);
  });

  it('returns an empty page with total 0 when nothing matches', async () => {
    const { client } = await filterFixture();
    const response = await list(client, filter({ metadata: { team: 'green' } }));
    expect(response.body).toEqual({ users: [], pagination: { token: null, total: 0 } });
  });

  it('counts only matching users in the total and paginates within the filter', async () => {
    const application = await freshApplication();
    await putUsers(application.client, {
      a: { metadata: { keep: true } },
      b: {},
      c: { metadata: { keep: true } },
      d: { metadata: { keep: true } },
      e: {},
      f: { metadata: { keep: true } },
    });
    const pages = await allPages(application.client, { limit: '2', ...filter({ metadata: { keep: true } }) });
    expect(pages.map(ids)).toEqual([['a', 'c'], ['d', 'f']]);
    for (const page of pages) expect(page.body.pagination.total).toBe(4);
  });

  it('matches every user for an empty metadata object or a falsy metadata value', async () => {
    const { client } = await filterFixture();
    for (const value of [{ metadata: {} }, { metadata: null }, {}]) {
      const response = await list(client, filter(value));
      expect(response.status).toBe(200);
      expect(response.body.pagination.total).toBe(5);
    }
  });

  it('tolerates and ignores a groupID key', async () => {
    const { client } = await filterFixture();
    const response = await list(client, filter({ groupID: 'no-such-group', metadata: { team: 'blue' } }));
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual(['u3']);
  });

  it.each([
    ['not JSON', '{metadata:'],
    ['a JSON array', '[]'],
    ['a JSON number', '1'],
    ['a JSON string', '"metadata"'],
    ['JSON null', 'null'],
  ])('answers 400 invalid_field when the filter is %s', async (_case, raw) => {
    const { client } = await freshApplication();
    const response = await list(client, { filter: raw });
    expectError(response, 400, 'invalid_field', 'The filter object must be a valid JSON object.');
  });

  it.each([
    ['an unknown key', { color: 'red' }, 'color'],
    ['a key other endpoints support', { location: { page: 'x' } }, 'location'],
    ['authorID', { authorID: 'someone' }, 'authorID'],
  ])('answers 400 invalid_field naming %s', async (_case, value, key) => {
    const { client } = await freshApplication();
    const response = await list(client, filter(value));
    expectError(response, 400, 'invalid_field', `The filter object does not support "${key}" as a field.`);
  });

  it.each([
    ['a nested object', { metadata: { a: { b: 1 } } }],
    ['an array value', { metadata: { a: [1] } }],
    ['a null value', { metadata: { a: null } }],
    ['a string', { metadata: 'team=red' }],
    ['an array', { metadata: ['a'] }],
    ['a value with a NUL character', { metadata: { a: 'x\u0000' } }],
    ['a key with a NUL character', { metadata: { 'a\u0000': 'x' } }],
    ['a value with an unpaired surrogate', { metadata: { a: '\ud800' } }],
  ])('answers 400 invalid_field when metadata is %s', async (_case, value) => {
    const { client } = await freshApplication();
    const response = await list(client, filter(value));
    expectError(response, 400, 'invalid_field', /metadata/);
  });
});

describe('GET /v1/users: search (extension)', () => {
  const people = {
    'ann-1': { name: 'Ann Lee', email: 'ann@example.com' },
    'bob-2': { name: 'Bob Stone', email: 'bob@other.org' },
    'cy-3': { name: 'Cy', email: 'CY@EXAMPLE.COM', metadata: { team: 'red' } },
    'dee_4': { name: '50% off', email: null },
  };

  it('finds users whose ID, name or e-mail contains the text, case-insensitive', async () => {
    const { client } = await freshApplication();
    await putUsers(client, people);
    expect(ids(await list(client, { search: 'EXAMPLE.com' }))).toEqual(['ann-1', 'cy-3']);
    expect(ids(await list(client, { search: 'stone' }))).toEqual(['bob-2']);
    expect(ids(await list(client, { search: 'n-1' }))).toEqual(['ann-1']);
    const found = await list(client, { search: 'ann' });
    expect(found.body).toEqual({ users: [expect.objectContaining({ id: 'ann-1', name: 'Ann Lee' })], pagination: { token: null, total: 1 } });
  });

  it('takes % and _ as themselves, not as patterns', async () => {
    const { client } = await freshApplication();
    await putUsers(client, people);
    expect(ids(await list(client, { search: '%' }))).toEqual(['dee_4']);
    expect(ids(await list(client, { search: '_' }))).toEqual(['dee_4']);
    expect(ids(await list(client, { search: '\\' }))).toEqual([]);
  });

  it('applies the metadata filter too, counts only what matches and pages within the search', async () => {
    const { client } = await freshApplication();
    await putUsers(client, people);
    expect(ids(await list(client, { search: 'example', filter: JSON.stringify({ metadata: { team: 'red' } }) }))).toEqual(['cy-3']);
    const application = await freshApplication();
    await insertUsers(application.id, 30, 'match-');
    await insertUsers(application.id, 30, 'other-');
    const pages = await allPages(application.client, { search: 'MATCH', limit: '7' });
    expect(pages.map((page) => page.body.pagination.total)).toEqual(Array(5).fill(30));
    expect(pages.flatMap(ids)).toEqual(Array.from({ length: 30 }, (_, i) => `match-${String(i + 1).padStart(5, '0')}`));
  });

  it('answers as without it when the search is absent or blank', async () => {
    const { client } = await freshApplication();
    await putUsers(client, people);
    const every = await list(client);
    expect(ids(every)).toEqual(['ann-1', 'bob-2', 'cy-3', 'dee_4']);
    expect((await list(client, { search: '  ' })).body).toEqual(every.body);
    expect((await list(client, { search: '' })).body).toEqual(every.body);
  });

  it('answers 400 invalid_field for a search the database cannot compare', async () => {
    const { client } = await freshApplication();
    expectError(await list(client, { search: 'a\u0000' }), 400, 'invalid_field', /"search"/);
    expectError(await client.get('/v1/users?search=a&search=b'), 400, 'invalid_field', /"search"/);
  });
});
