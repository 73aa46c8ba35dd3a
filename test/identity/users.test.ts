/**
 * The current generation's user endpoints through the gateway: PUT, GET one, DELETE, the legacy
 * POST create, and tenant isolation.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createApplication, request, uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';
import { expectError } from '../support/expect.js';
import { storedUsers } from '../support/rows.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('test app', (started) => ({ system, app } = started));

const ISO_WITH_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const userPath = (id: string) => `/v1/users/${encodeURIComponent(id)}`;
const groupPath = (id: string) => `/v1/groups/${encodeURIComponent(id)}`;

function putUser(id: string, body: unknown, client = app.client) {
  return client.put(userPath(id), body);
}

function getUser(id: string, client = app.client) {
  return client.get(userPath(id));
}

async function createGroup(status: 'active' | 'deleted' = 'active', members: string[] = []): Promise<string> {
  const id = uniqueId('group');
  const response = await app.client.put(groupPath(id), { name: `Group ${id}`, status, members });
  expect(response.status).toBe(200);
  return id;
}

async function groupMembers(groupId: string): Promise<string[]> {
  const response = await app.client.get(groupPath(groupId));
  expect(response.status).toBe(200);
  return response.body.members;
}

/** A raw body, as a client that does not JSON-encode would send it. */
async function rawPut(path: string, rawBody: string): Promise<ApiResponse> {
  return request(system.url, 'PUT', path, {
    token: await serverToken(app.id, app.secret),
    rawBody,
    headers: { 'content-type': 'application/json' },
  });
}

const storedUserCount = (id: string, applicationId = app.id) => storedUsers(system, applicationId, id);


async function expectUserAbsent(id: string) {
  expectError(await getUser(id), 401, 'user_not_found');
  expect(await storedUserCount(id)).toBe(0);
}

const FULL_USER = {
  name: 'Full Name',
  email: 'full@example.com',
  shortName: 'Fully',
  status: 'active',
  profilePictureURL: 'https://example.com/pictures/full.png',
  metadata: { team: 'blue', level: 3, admin: true },
};

async function createFullUser(): Promise<string> {
  const id = uniqueId('user');
  const response = await putUser(id, FULL_USER);
  expect(response.status).toBe(200);
  return id;
}

describe('PUT /v1/users/<ID>: create and update', () => {
  it('answers "created" for a new user and "updated" for an existing one', async () => {
    const id = uniqueId('user');
    const created = await putUser(id, { name: 'Ann' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ success: true, message: `You successfully created user ${id}` });

    const updated = await putUser(id, { name: 'Ann B' });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ success: true, message: `You successfully updated user ${id}` });
  });

  it('creates a bare user from {} with the defaults', async () => {
    const id = uniqueId('bare');
    const created = await putUser(id, {});
    expect(created.body).toEqual({ success: true, message: `You successfully created user ${id}` });

    const read = await getUser(id);
    expect(read.status).toBe(200);
    const { createdTimestamp, ...rest } = read.body;
    expect(rest).toEqual({
      id,
      name: null,
      email: null,
      shortName: null,
      short_name: null,
      first_name: null,
      last_name: null,
      status: 'active',
      profilePictureURL: null,
      profile_picture_url: null,
      metadata: {},
      groups: [],
      organizations: [],
      groupIDsWithLinkedChatProfile: [],
      groupIDsWithLinkedSlackProfile: [],
    });
    expect(createdTimestamp).toMatch(ISO_WITH_MILLIS);
  });

  it('stores every provided field on create', async () => {
    const id = await createFullUser();
    const read = await getUser(id);
    expect(read.body).toMatchObject({
      id,
      ...FULL_USER,
      short_name: FULL_USER.shortName,
      profile_picture_url: FULL_USER.profilePictureURL,
    });
    const stored = await system.sql.query(
      'SELECT name, email, short_name, profile_picture_url, status, metadata FROM identity.users WHERE application_id = $1 AND external_id = $2',
      [app.id, id],
    );
    expect(stored.rows).toEqual([
      {
        name: FULL_USER.name,
        email: FULL_USER.email,
        short_name: FULL_USER.shortName,
        profile_picture_url: FULL_USER.profilePictureURL,
        status: 'active',
        metadata: FULL_USER.metadata,
      },
    ]);
  });

  it('changes only the provided fields on update', async () => {
    const id = await createFullUser();
    const updated = await putUser(id, { name: 'Renamed' });
    expect(updated.body.message).toBe(`You successfully updated user ${id}`);
    const read = await getUser(id);
    expect(read.body).toMatchObject({ ...FULL_USER, name: 'Renamed' });
  });

  it('replaces the whole metadata object when metadata is given', async () => {
    const id = await createFullUser();
    await putUser(id, { metadata: { other: 'x' } });
    expect((await getUser(id)).body.metadata).toEqual({ other: 'x' });
    await putUser(id, { metadata: {} });
    expect((await getUser(id)).body.metadata).toEqual({});
  });

  it('clears a field sent as null and leaves absent fields unchanged', async () => {
    const id = await createFullUser();
    const response = await putUser(id, { name: null, email: null, shortName: null, profilePictureURL: null });
    expect(response.status).toBe(200);
    const read = await getUser(id);
    expect(read.body).toMatchObject({
      name: null,
      email: null,
      shortName: null,
      short_name: null,
      profilePictureURL: null,
      profile_picture_url: null,
      status: 'active',
      metadata: FULL_USER.metadata,
    });
  });

  it('clears only the one field sent as null', async () => {
    const id = await createFullUser();
    await putUser(id, { email: null });
    expect((await getUser(id)).body).toMatchObject({ ...FULL_USER, email: null });
  });

  it('stores null for fields sent as null on create', async () => {
    const id = uniqueId('user');
    const created = await putUser(id, { name: null, email: null, shortName: null, profilePictureURL: null });
    expect(created.body.message).toBe(`You successfully created user ${id}`);
    expect((await getUser(id)).body).toMatchObject({ name: null, email: null, shortName: null, profilePictureURL: null });
  });

  it('treats an empty e-mail as not provided: null on create, unchanged on update', async () => {
    const id = uniqueId('user');
    const created = await putUser(id, { email: '', name: 'No Mail' });
    expect(created.status).toBe(200);
    expect((await getUser(id)).body).toMatchObject({ email: null, name: 'No Mail' });

    await putUser(id, { email: 'mail@example.com' });
    const updated = await putUser(id, { email: '', name: 'Still Mail' });
    expect(updated.status).toBe(200);
    expect((await getUser(id)).body).toMatchObject({ email: 'mail@example.com', name: 'Still Mail' });
  });

  it('moves status between active and deleted, and the user stays readable', async () => {
    const id = await createFullUser();
    expect((await putUser(id, { status: 'deleted' })).status).toBe(200);
    expect((await getUser(id)).body).toMatchObject({ status: 'deleted', name: FULL_USER.name });
    expect((await putUser(id, { name: 'Written while deleted' })).status).toBe(200);
    expect((await getUser(id)).body).toMatchObject({ status: 'deleted', name: 'Written while deleted' });
    expect((await putUser(id, { status: 'active' })).status).toBe(200);
    expect((await getUser(id)).body.status).toBe('active');
  });

  it('creates a user directly in the deleted status', async () => {
    const id = uniqueId('user');
    expect((await putUser(id, { status: 'deleted' })).body.message).toBe(`You successfully created user ${id}`);
    expect((await getUser(id)).body.status).toBe('deleted');
  });

  it('stores strings and metadata values exactly as given', async () => {
    const id = uniqueId('exact');
    const metadata = { 'ключ': 'значение 😀', empty: '', negative: -1.25, zero: 0, no: false, 'with space': 'x y' };
    const response = await putUser(id, { name: '', shortName: 'Zoë 😀', email: 'Mixed.Case@Example.COM', metadata });
    expect(response.status).toBe(200);
    expect((await getUser(id)).body).toMatchObject({ name: '', shortName: 'Zoë 😀', email: 'Mixed.Case@Example.COM', metadata });
  });

  it('accepts empty addGroups and removeGroups arrays', async () => {
    const id = uniqueId('user');
    const response = await putUser(id, { addGroups: [], removeGroups: [] });
    expect(response.body).toEqual({ success: true, message: `You successfully created user ${id}` });
    expect((await getUser(id)).body.groups).toEqual([]);
  });

  it('keeps the creation timestamp across updates', async () => {
    const id = await createFullUser();
    const before = (await getUser(id)).body.createdTimestamp;
    await putUser(id, { name: 'Later' });
    expect((await getUser(id)).body.createdTimestamp).toBe(before);
  });
});

describe('PUT /v1/users/<ID>: camelCase and snake_case keys', () => {
  it('lets camelCase win over its snake_case alias', async () => {
    const id = await createFullUser();
    const response = await putUser(id, {
      shortName: 'camel',
      short_name: 'snake',
      profilePictureURL: 'https://example.com/camel.png',
      profile_picture_url: 'https://example.com/snake.png',
    });
    expect(response.status).toBe(200);
    expect((await getUser(id)).body).toMatchObject({
      shortName: 'camel',
      short_name: 'camel',
      profilePictureURL: 'https://example.com/camel.png',
      profile_picture_url: 'https://example.com/camel.png',
    });
  });

  it('uses the snake_case value when the camelCase key is null', async () => {
    const id = await createFullUser();
    const response = await putUser(id, {
      shortName: null,
      short_name: 'snake',
      profilePictureURL: null,
      profile_picture_url: 'https://example.com/snake.png',
    });
    expect(response.status).toBe(200);
    expect((await getUser(id)).body).toMatchObject({
      shortName: 'snake',
      profilePictureURL: 'https://example.com/snake.png',
    });
  });

  it('stores snake_case keys alone under the camelCase fields', async () => {
    const id = await createFullUser();
    await putUser(id, { short_name: 'snaky', profile_picture_url: 'https://example.com/s.png' });
    expect((await getUser(id)).body).toMatchObject({
      shortName: 'snaky',
      short_name: 'snaky',
      profilePictureURL: 'https://example.com/s.png',
      profile_picture_url: 'https://example.com/s.png',
    });
  });

  it('clears through a snake_case null when the camelCase key is absent', async () => {
    const id = await createFullUser();
    await putUser(id, { short_name: null, profile_picture_url: null });
    expect((await getUser(id)).body).toMatchObject({ shortName: null, profilePictureURL: null, name: FULL_USER.name });
  });

  it('accepts first_name and last_name and ignores them', async () => {
    const id = await createFullUser();
    const response = await putUser(id, { first_name: 'First', last_name: 'Last' });
    expect(response.status).toBe(200);
    const read = await getUser(id);
    expect(read.body).toMatchObject({ ...FULL_USER, first_name: null, last_name: null });
  });
});

describe('PUT /v1/users/<ID>: field validation', () => {
  it.each([
    ['a bad e-mail', { email: 'not-an-email' }, 'email'],
    ['an e-mail that is a number', { email: 42 }, 'email'],
    ['a profile picture URL with a raw space', { profilePictureURL: 'https://example.com/a b.png' }, 'profilePictureURL'],
    ['a profile picture URL with raw non-ASCII', { profilePictureURL: 'https://example.com/é.png' }, 'profilePictureURL'],
    ['a profile picture URL without a scheme', { profilePictureURL: 'example.com/a.png' }, 'profilePictureURL'],
    ['a snake_case profile picture URL with a raw space', { profile_picture_url: 'https://example.com/a b.png' }, 'profile_picture_url'],
    ['a status other than active/deleted', { status: 'inactive' }, 'status'],
    ['a null status', { status: null }, 'status'],
    ['a name that is a number', { name: 7 }, 'name'],
    ['a shortName that is an object', { shortName: {} }, 'shortName'],
    ['metadata with a nested object', { metadata: { a: { b: 1 } } }, 'metadata'],
    ['metadata with an array value', { metadata: { a: [1] } }, 'metadata'],
    ['metadata with a null value', { metadata: { a: null } }, 'metadata'],
    ['metadata that is an array', { metadata: ['a'] }, 'metadata'],
    ['metadata that is null', { metadata: null }, 'metadata'],
    ['addGroups with a number', { addGroups: [1] }, 'addGroups'],
    ['removeGroups with a number', { removeGroups: [2] }, 'removeGroups'],
    ['addGroups that is not an array', { addGroups: 'g' }, 'addGroups'],
  ])('rejects %s with 400 invalid_field naming the field, and creates nothing', async (_case, body, field) => {
    const id = uniqueId('invalid');
    const response = await putUser(id, body);
    expectError(response, 400, 'invalid_field');
    expect(response.body.message).toContain(field);
    await expectUserAbsent(id);
  });

  it('leaves an existing user untouched when a field is invalid', async () => {
    const id = await createFullUser();
    const response = await putUser(id, { name: 'Changed', email: 'bad email' });
    expectError(response, 400, 'invalid_field', /email/);
    expect((await getUser(id)).body).toMatchObject(FULL_USER);
  });

  it('accepts a percent-encoded space and a mailto: URL as profile picture', async () => {
    const id = uniqueId('user');
    expect((await putUser(id, { profilePictureURL: 'https://example.com/a%20b.png' })).status).toBe(200);
    expect((await getUser(id)).body.profilePictureURL).toBe('https://example.com/a%20b.png');
    expect((await putUser(id, { profilePictureURL: 'mailto:x@y' })).status).toBe(200);
    expect((await getUser(id)).body.profilePictureURL).toBe('mailto:x@y');
  });

  it('rejects an unexpected field with 400 unexpected_field naming it', async () => {
    const id = uniqueId('user');
    const response = await putUser(id, { name: 'x', nickname: 'y' });
    expectError(response, 400, 'unexpected_field', /^nickname is not a valid field name for this request\./);
    await expectUserAbsent(id);
  });

  it.each([
    ['an empty body', ''],
    ['a whitespace-only body', '  \n\t '],
    ['malformed JSON', '{"name": "x"'],
    ['a JSON array', '[{"name": "x"}]'],
    ['JSON null', 'null'],
    ['a JSON string', '"name"'],
  ])('rejects %s with 400 invalid_request and creates nothing', async (_case, rawBody) => {
    const id = uniqueId('user');
    const response = await rawPut(userPath(id), rawBody);
    expectError(response, 400, 'invalid_request');
    await expectUserAbsent(id);
  });
});

describe('PUT /v1/users/<ID>: text the database cannot store as sent', () => {
  it.each([
    ['a NUL character in name', '{"name": "a\\u0000b"}', 'name'],
    ['a NUL character in shortName', '{"shortName": "a\\u0000"}', 'shortName'],
    ['a NUL character in short_name', '{"short_name": "a\\u0000", "email": "x@example.com"}', 'short_name'],
    ['a NUL character in a metadata value', '{"metadata": {"a": "x\\u0000"}}', 'metadata'],
    ['a NUL character in a metadata key', '{"metadata": {"a\\u0000": "x"}}', 'metadata'],
    ['a NUL character in an addGroups item', '{"addGroups": ["g\\u0000"]}', 'addGroups/0'],
    ['a NUL character in a removeGroups item', '{"removeGroups": ["g", "g\\u0000"]}', 'removeGroups/1'],
    ['an unpaired surrogate in name', '{"name": "\\ud800"}', 'name'],
    ['an unpaired surrogate in a metadata value', '{"metadata": {"a": "x\\udc00"}}', 'metadata'],
  ])('rejects %s with 400 invalid_field, creating nothing', async (_case, rawBody, field) => {
    const id = uniqueId('unstorable');
    const response = await rawPut(userPath(id), rawBody);
    expectError(response, 400, 'invalid_field', new RegExp(`^Input type for ${field} is not valid`));
    await expectUserAbsent(id);
  });

  it('leaves an existing user untouched when a value cannot be stored', async () => {
    const id = await createFullUser();
    const response = await rawPut(userPath(id), '{"shortName": "new", "name": "a\\u0000"}');
    expectError(response, 400, 'invalid_field', /name/);
    expect((await getUser(id)).body).toMatchObject(FULL_USER);
  });

  it('stores astral characters (paired surrogates) exactly', async () => {
    const id = uniqueId('astral');
    expect((await rawPut(userPath(id), '{"name": "\\ud83d\\ude00", "metadata": {"\\ud83d\\ude00": "\\ud83d\\ude00"}}')).status).toBe(200);
    expect((await getUser(id)).body).toMatchObject({ name: '😀', metadata: { '😀': '😀' } });
  });
});

describe('PUT /v1/users/<ID>: path IDs', () => {
  it('checks the path ID before the body (an invalid ID with an empty body is invalid_field, not invalid_request)', async () => {
    const response = await request(system.url, 'PUT', `/v1/users/${encodeURIComponent('cord:x')}`, {
      token: await serverToken(app.id, app.secret),
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, 'invalid_field', 'Input type for userID is not valid, expected identifier.');
  });

  it.each([
    ['starting with cord:', 'cord:abc'],
    ['containing a control character', 'bad\u0001id'],
    ['containing a format character', 'bad\u200Bid'],
    ['longer than 320 code points', 'x'.repeat(321)],
    ['containing a private-use character', 'bad\uE000id'],
    ['containing an unassigned code point', 'bad\u0378id'],
  ])('rejects an ID %s with 400 invalid_field for userID', async (_case, id) => {
    const response = await putUser(id, { name: 'x' });
    expectError(response, 400, 'invalid_field', 'Input type for userID is not valid, expected identifier.');
    expect(await storedUserCount(id)).toBe(0);
  });

  it('accepts an ID of exactly 320 code points even when they are astral characters', async () => {
    const id = '😀'.repeat(320);
    const response = await putUser(id, {});
    expect(response.body).toEqual({ success: true, message: `You successfully created user ${id}` });
    expect((await getUser(id)).body.id).toBe(id);
  });

  it('accepts an ID containing / sent as %2F, and spaces, @ and JSON text', async () => {
    for (const id of [uniqueId('team/alpha'), uniqueId('a user@example.com'), uniqueId('{"json":true}')]) {
      const created = await putUser(id, { name: 'Slash' });
      expect(created.body).toEqual({ success: true, message: `You successfully created user ${id}` });
      const read = await getUser(id);
      expect(read.status).toBe(200);
      expect(read.body.id).toBe(id);
    }
  });

  it('checks the path ID before the body', async () => {
    const response = await putUser('cord:abc', { nickname: 'x' });
    expectError(response, 400, 'invalid_field', 'Input type for userID is not valid, expected identifier.');
  });

  it('accepts an ID containing a percent sign', async () => {
    const id = uniqueId('100%');
    expect((await putUser(id, {})).body.message).toBe(`You successfully created user ${id}`);
    expect((await getUser(id)).body.id).toBe(id);
  });

  it('serves the path with a trailing slash and in any letter case', async () => {
    const id = uniqueId('user');
    expect((await app.client.put(`/V1/Users/${encodeURIComponent(id)}/`, { name: 'Trailing' })).body).toEqual({
      success: true,
      message: `You successfully created user ${id}`,
    });
    expect((await app.client.get(`/v1/users/${encodeURIComponent(id)}/`)).body.name).toBe('Trailing');
  });

  it('compares IDs case-sensitively', async () => {
    const id = uniqueId('CaseUser');
    await putUser(id, { name: 'Upper' });
    const lower = id.toLowerCase();
    expect((await putUser(lower, { name: 'Lower' })).body.message).toBe(`You successfully created user ${lower}`);
    expect((await getUser(id)).body.name).toBe('Upper');
    expect((await getUser(lower)).body.name).toBe('Lower');
  });
});

describe('PUT /v1/users/<ID>: addGroups and removeGroups', () => {
  it('adds a new user to the groups in addGroups', async () => {
    const g1 = await createGroup();
    const g2 = await createGroup();
    const id = uniqueId('user');
    const response = await putUser(id, { addGroups: [g1, g2] });
    expect(response.body.message).toBe(`You successfully created user ${id}`);
    expect((await getUser(id)).body.groups).toEqual([g1, g2]);
    expect(await groupMembers(g1)).toEqual([id]);
    expect(await groupMembers(g2)).toEqual([id]);
  });

  it('removes the user from the groups in removeGroups and keeps other memberships', async () => {
    const g1 = await createGroup();
    const g2 = await createGroup();
    const id = uniqueId('user');
    await putUser(id, { addGroups: [g1, g2] });
    const response = await putUser(id, { removeGroups: [g1] });
    expect(response.status).toBe(200);
    expect((await getUser(id)).body.groups).toEqual([g2]);
    expect(await groupMembers(g1)).toEqual([]);
  });

  it('adds and removes in one call', async () => {
    const g1 = await createGroup();
    const g2 = await createGroup();
    const id = uniqueId('user');
    await putUser(id, { addGroups: [g1] });
    expect((await putUser(id, { addGroups: [g2], removeGroups: [g1] })).status).toBe(200);
    expect((await getUser(id)).body.groups).toEqual([g2]);
  });

  it('does not fail when adding to a group the user is in or removing from one they are not in', async () => {
    const g1 = await createGroup();
    const g2 = await createGroup();
    const id = uniqueId('user');
    await putUser(id, { addGroups: [g1] });
    const response = await putUser(id, { addGroups: [g1], removeGroups: [g2] });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: `You successfully updated user ${id}` });
    expect((await getUser(id)).body.groups).toEqual([g1]);
    expect(await groupMembers(g1)).toEqual([id]);
  });

  it('keeps other members of the group when the user joins or leaves', async () => {
    const other = uniqueId('user');
    await putUser(other, {});
    const group = await createGroup('active', [other]);
    const id = uniqueId('user');
    await putUser(id, { addGroups: [group] });
    expect(await groupMembers(group)).toEqual([other, id]);
    await putUser(id, { removeGroups: [group] });
    expect(await groupMembers(group)).toEqual([other]);
  });

  it('can join a group whose status is deleted', async () => {
    const group = await createGroup('deleted');
    const id = uniqueId('user');
    expect((await putUser(id, { addGroups: [group] })).status).toBe(200);
    expect(await groupMembers(group)).toEqual([id]);
  });

  it('rejects the same group in addGroups and removeGroups with 400 invalid_field, changing nothing', async () => {
    const group = await createGroup();
    const id = uniqueId('user');
    const response = await putUser(id, { name: 'x', addGroups: [group], removeGroups: [group] });
    expectError(response, 400, 'invalid_field', 'Adding and removing the same group is invalid.');
    await expectUserAbsent(id);
    expect(await groupMembers(group)).toEqual([]);
  });

  it('rejects an unknown group in addGroups with 401 group_not_found and does not create the user', async () => {
    const group = await createGroup();
    const unknown = uniqueId('no-such-group');
    const id = uniqueId('user');
    const response = await putUser(id, { name: 'x', addGroups: [group, unknown] });
    expectError(response, 401, 'group_not_found', new RegExp(unknown));
    await expectUserAbsent(id);
    expect(await groupMembers(group)).toEqual([]);
  });

  it('rejects an unknown group in removeGroups with 401 group_not_found and does not create the user', async () => {
    const unknown = uniqueId('no-such-group');
    const id = uniqueId('user');
    const response = await putUser(id, { removeGroups: [unknown] });
    expectError(response, 401, 'group_not_found', new RegExp(unknown));
    await expectUserAbsent(id);
  });

  it('applies nothing to an existing user when a group is unknown', async () => {
    const id = await createFullUser();
    const kept = await createGroup();
    const joinable = await createGroup();
    await putUser(id, { addGroups: [kept] });
    const response = await putUser(id, {
      name: 'Should not stick',
      addGroups: [joinable],
      removeGroups: [kept, uniqueId('no-such-group')],
    });
    expectError(response, 401, 'group_not_found');
    expect((await getUser(id)).body).toMatchObject({ ...FULL_USER, groups: [kept] });
    expect(await groupMembers(joinable)).toEqual([]);
    expect(await groupMembers(kept)).toEqual([id]);
  });

  it('does not treat a group of another application as known', async () => {
    const other = await createApplication(system, 'other app');
    const foreign = uniqueId('foreign-group');
    expect((await other.client.put(groupPath(foreign), { name: 'Foreign' })).status).toBe(200);
    const id = uniqueId('user');
    expectError(await putUser(id, { addGroups: [foreign] }), 401, 'group_not_found');
    await expectUserAbsent(id);
  });
});

describe('PUT /v1/users/<ID>: concurrency', () => {
  it('creates a new user exactly once when several PUTs race', async () => {
    const id = uniqueId('racer');
    const group = await createGroup();
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, index) => putUser(id, { name: `Racer ${index}`, addGroups: [group] })),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(12).fill(200));
    const messages = responses.map((response) => response.body.message);
    expect(messages.filter((message) => message === `You successfully created user ${id}`)).toHaveLength(1);
    expect(messages.filter((message) => message === `You successfully updated user ${id}`)).toHaveLength(11);
    expect(await storedUserCount(id)).toBe(1);
    expect(await groupMembers(group)).toEqual([id]);
  });
});

describe('GET /v1/users/<ID>', () => {
  it('returns every field of the user object', async () => {
    const id = await createFullUser();
    const read = await getUser(id);
    expect(read.status).toBe(200);
    const { createdTimestamp, ...rest } = read.body;
    expect(rest).toEqual({
      id,
      name: FULL_USER.name,
      email: FULL_USER.email,
      shortName: FULL_USER.shortName,
      short_name: FULL_USER.shortName,
      first_name: null,
      last_name: null,
      status: 'active',
      profilePictureURL: FULL_USER.profilePictureURL,
      profile_picture_url: FULL_USER.profilePictureURL,
      metadata: FULL_USER.metadata,
      groups: [],
      organizations: [],
      groupIDsWithLinkedChatProfile: [],
      groupIDsWithLinkedSlackProfile: [],
    });
    expect(createdTimestamp).toMatch(ISO_WITH_MILLIS);
    const stored = await system.sql.query(
      'SELECT created_at FROM identity.users WHERE application_id = $1 AND external_id = $2',
      [app.id, id],
    );
    expect(new Date(createdTimestamp).getTime()).toBe(new Date(stored.rows[0].created_at).getTime());
  });

  it('lists only active groups, in joining order, and organizations equals groups', async () => {
    const first = await createGroup('active');
    const hidden = await createGroup('deleted');
    const second = await createGroup('active');
    const id = uniqueId('user');
    await putUser(id, { addGroups: [first, hidden, second] });
    const read = await getUser(id);
    expect(read.body.groups).toEqual([first, second]);
    expect(read.body.organizations).toEqual([first, second]);
    expect(read.body.groupIDsWithLinkedChatProfile).toEqual([]);
    // The original's name for the same list, so that its clients read it unchanged.
    expect(read.body.groupIDsWithLinkedSlackProfile).toEqual([]);
  });

  it('drops a group from the list when its status becomes deleted and shows it again when active', async () => {
    const group = await createGroup('active');
    const id = uniqueId('user');
    await putUser(id, { addGroups: [group] });
    expect((await getUser(id)).body.groups).toEqual([group]);
    await app.client.put(groupPath(group), { status: 'deleted' });
    expect((await getUser(id)).body.groups).toEqual([]);
    await app.client.put(groupPath(group), { status: 'active' });
    expect((await getUser(id)).body.groups).toEqual([group]);
  });

  it('answers 401 user_not_found for an unknown user', async () => {
    const response = await getUser(uniqueId('nobody'));
    expectError(response, 401, 'user_not_found');
  });

  it.each([
    ['starting with cord:', 'cord:abc'],
    ['containing a control character', 'x\u0007y'],
    ['longer than 320 code points', 'y'.repeat(321)],
  ])('answers 400 invalid_request for an ID %s', async (_case, id) => {
    expectError(await getUser(id), 400, 'invalid_request');
  });
});

describe('DELETE /v1/users/<ID>', () => {
  it('deletes the user with permanently_delete true and answers the contract body', async () => {
    const id = await createFullUser();
    const response = await app.client.delete(userPath(id), { permanently_delete: true });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      message: 'User deleted.',
      userID: id,
      failedDeletionIDs: [],
      failedDeletionFileIDs: [],
    });
    await expectUserAbsent(id);
  });

  it('removes the deleted user from their groups, keeping the groups and other members', async () => {
    const other = uniqueId('user');
    await putUser(other, {});
    const g1 = await createGroup('active', [other]);
    const g2 = await createGroup('deleted');
    const id = uniqueId('user');
    await putUser(id, { addGroups: [g1, g2] });
    expect(await groupMembers(g1)).toEqual([other, id]);

    expect((await app.client.delete(userPath(id), { permanently_delete: true })).status).toBe(200);
    expect(await groupMembers(g1)).toEqual([other]);
    expect(await groupMembers(g2)).toEqual([]);
    const listed = await app.client.get(`${groupPath(g1)}/members`);
    expect(listed.status).toBe(200);
    expect(listed.body.users.map((user: { id: string }) => user.id)).toEqual([other]);
    expect(listed.body.pagination.total).toBe(1);
    expect((await getUser(other)).body.groups).toEqual([g1]);
  });

  it('lets the ID be used again for a new user after deletion', async () => {
    const id = await createFullUser();
    await app.client.delete(userPath(id), { permanently_delete: true });
    const again = await putUser(id, {});
    expect(again.body).toEqual({ success: true, message: `You successfully created user ${id}` });
    expect((await getUser(id)).body).toMatchObject({ name: null, email: null, metadata: {} });
  });

  it('answers 400 invalid_request for permanently_delete false and keeps the user', async () => {
    const id = await createFullUser();
    const response = await app.client.delete(userPath(id), { permanently_delete: false });
    expectError(response, 400, 'invalid_request');
    expect((await getUser(id)).body).toMatchObject(FULL_USER);
  });

  it('answers 400 missing_field when permanently_delete is absent', async () => {
    const id = await createFullUser();
    const response = await app.client.delete(userPath(id), {});
    expectError(response, 400, 'missing_field', /permanently_delete/);
    expect((await getUser(id)).status).toBe(200);
  });

  it.each([['a string', 'true'], ['a number', 1], ['null', null]])(
    'answers 400 invalid_field when permanently_delete is %s',
    async (_case, value) => {
      const id = await createFullUser();
      const response = await app.client.delete(userPath(id), { permanently_delete: value });
      expectError(response, 400, 'invalid_field', /permanently_delete/);
      expect((await getUser(id)).status).toBe(200);
    },
  );

  it('answers 400 invalid_request for an empty body and keeps the user', async () => {
    const id = await createFullUser();
    const response = await request(system.url, 'DELETE', userPath(id), {
      token: await serverToken(app.id, app.secret),
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, 'invalid_request');
    expect((await getUser(id)).status).toBe(200);
  });

  it('answers 400 unexpected_field for another key', async () => {
    const id = await createFullUser();
    const response = await app.client.delete(userPath(id), { permanently_delete: true, force: true });
    expectError(response, 400, 'unexpected_field', /^force /);
    expect((await getUser(id)).status).toBe(200);
  });

  it('answers 401 user_not_found for an unknown user', async () => {
    const response = await app.client.delete(userPath(uniqueId('nobody')), { permanently_delete: true });
    expectError(response, 401, 'user_not_found');
  });

  it('answers 400 invalid_field for an invalid path ID', async () => {
    const response = await app.client.delete(userPath('cord:abc'), { permanently_delete: true });
    expectError(response, 400, 'invalid_field', 'Input type for userID is not valid, expected identifier.');
  });

  it('deletes a user whose ID contains / sent as %2F', async () => {
    const id = uniqueId('dir/user');
    await putUser(id, {});
    const response = await app.client.delete(userPath(id), { permanently_delete: true });
    expect(response.body).toMatchObject({ success: true, userID: id });
    await expectUserAbsent(id);
  });
});

describe('POST /v1/users (legacy create)', () => {
  it('creates the user with 201 and the created message', async () => {
    const id = uniqueId('legacy');
    const response = await app.client.post('/v1/users', { id, name: 'Legacy', email: 'legacy@example.com' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({ success: true, message: `You successfully created user ${id}` });
    expect((await getUser(id)).body).toMatchObject({ id, name: 'Legacy', email: 'legacy@example.com', status: 'active' });
  });

  it('answers 409 user_already_exists when the ID exists, leaving the user unchanged', async () => {
    const id = uniqueId('legacy');
    await app.client.post('/v1/users', { id, name: 'First' });
    const again = await app.client.post('/v1/users', { id, name: 'Second' });
    expectError(again, 409, 'user_already_exists');
    expect((await getUser(id)).body.name).toBe('First');
    expect(await storedUserCount(id)).toBe(1);
  });

  it('answers 409 user_already_exists for a user created with PUT', async () => {
    const id = await createFullUser();
    expectError(await app.client.post('/v1/users', { id }), 409, 'user_already_exists');
  });

  it('accepts a numeric id and stores its string form', async () => {
    const id = Math.floor(Math.random() * 1e12) + 1e12;
    const response = await app.client.post('/v1/users', { id });
    expect(response.status).toBe(201);
    expect(response.body.message).toBe(`You successfully created user ${id}`);
    expect((await getUser(String(id))).body.id).toBe(String(id));
  });

  it.each([
    ['starting with cord:', 'cord:abc'],
    ['containing a control character', 'bad\u0001id'],
    ['containing a NUL character', 'bad\u0000id'],
  ])('answers 400 invalid_field for an id %s, creating nothing', async (_case, id) => {
    const countUsers = async () =>
      (await system.sql.query('SELECT count(*)::int AS count FROM identity.users WHERE application_id = $1', [app.id]))
        .rows[0].count;
    const before = await countUsers();
    const response = await app.client.post('/v1/users', { id });
    expectError(response, 400, 'invalid_field', 'Input type for id is not valid, expected identifier.');
    expect(await countUsers()).toBe(before);
  });

  it('answers 400 invalid_field for an id longer than 128 characters', async () => {
    expectError(await app.client.post('/v1/users', { id: 'x'.repeat(129) }), 400, 'invalid_field', /\bid\b/);
  });

  it('answers 400 invalid_field for a field value the database cannot store', async () => {
    const id = uniqueId('legacy');
    const response = await app.client.post('/v1/users', { id, name: 'a\u0000b' });
    expectError(response, 400, 'invalid_field', /^Input type for name is not valid/);
    await expectUserAbsent(id);
  });

  it('answers 400 missing_field when id is absent', async () => {
    expectError(await app.client.post('/v1/users', { name: 'No id' }), 400, 'missing_field', /id/);
  });
});

describe('tenant isolation', () => {
  let other: TestApplication;
  beforeAll(async () => {
    other = await createApplication(system, 'tenant B');
  });

  it("does not let another application read a user's ID", async () => {
    const id = await createFullUser();
    expectError(await getUser(id, other.client), 401, 'user_not_found');
  });

  it("does not list another application's users", async () => {
    const id = await createFullUser();
    const listed = await other.client.get('/v1/users');
    expect(listed.status).toBe(200);
    expect(listed.body.users.map((user: { id: string }) => user.id)).not.toContain(id);
    const own = await app.client.get(`/v1/users?limit=1000`);
    expect(own.body.users.map((user: { id: string }) => user.id)).toContain(id);
  });

  it('gives each application its own user under the same ID', async () => {
    const id = await createFullUser();
    const created = await putUser(id, { name: 'B side' }, other.client);
    expect(created.body).toEqual({ success: true, message: `You successfully created user ${id}` });
    expect((await getUser(id)).body.name).toBe(FULL_USER.name);
    expect((await getUser(id, other.client)).body).toMatchObject({ name: 'B side', email: null });
    expect(await storedUserCount(id, other.id)).toBe(1);
  });

  it("does not let another application delete a user", async () => {
    const id = await createFullUser();
    expectError(await other.client.delete(userPath(id), { permanently_delete: true }), 401, 'user_not_found');
    expect((await getUser(id)).status).toBe(200);
  });
});
