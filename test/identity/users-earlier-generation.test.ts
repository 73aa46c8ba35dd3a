/**
 * The earlier generation on the user paths (both generations share them, with the earlier one's
 * snake_case keys and response shapes): a request is earlier-generation with the header
 * `X-API-Generation: earlier`, or when a PUT user body has a snake_case-only key.
 */
import { describe, expect, it } from 'vitest';
import { createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { expectError } from '../support/expect.js';
import { storedUsers } from '../support/rows.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('test app', (started) => ({ system, app } = started));

const EARLIER = { 'X-API-Generation': 'earlier' };
const userPath = (id: string) => `/v1/users/${encodeURIComponent(id)}`;

function codePointCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const storedUserCount = (id: string, applicationId = app.id) => storedUsers(system, applicationId, id);


async function expectUserAbsent(id: string) {
  expectError(await app.client.get(userPath(id)), 401, 'user_not_found');
  expect(await storedUserCount(id)).toBe(0);
}

describe('PUT /v1/users/<ID> with a snake_case body', () => {
  it.each([
    ['short_name', { short_name: 'Shorty', name: 'Name' }],
    ['profile_picture_url', { profile_picture_url: 'https://example.com/p.png' }],
    ['first_name', { first_name: 'First' }],
    ['last_name', { last_name: 'Last' }],
  ])('answers 400 missing_field for email when creating with %s and no email', async (_case, body) => {
    const id = uniqueId('earlier');
    const response = await app.client.put(userPath(id), body);
    expectError(response, 400, 'missing_field', /email/);
    await expectUserAbsent(id);
  });

  it('answers 400 missing_field when the e-mail is empty or null on create', async () => {
    for (const email of ['', null]) {
      const id = uniqueId('earlier');
      expectError(await app.client.put(userPath(id), { short_name: 'S', email }), 400, 'missing_field', /email/);
      await expectUserAbsent(id);
    }
  });

  it('creates with an e-mail and answers exactly {success: true}', async () => {
    const id = uniqueId('earlier');
    const response = await app.client.put(userPath(id), {
      email: 'old@example.com',
      name: 'Old Style',
      short_name: 'Old',
      profile_picture_url: 'https://example.com/old.png',
      first_name: 'Ignored',
      last_name: 'Also ignored',
      status: 'active',
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });

    const read = await app.client.get(userPath(id));
    expect(read.body).toMatchObject({
      id,
      email: 'old@example.com',
      name: 'Old Style',
      shortName: 'Old',
      short_name: 'Old',
      profilePictureURL: 'https://example.com/old.png',
      profile_picture_url: 'https://example.com/old.png',
      first_name: null,
      last_name: null,
      status: 'active',
    });
  });

  it('updates an existing user without an e-mail and answers {success: true}', async () => {
    const id = uniqueId('earlier');
    await app.client.put(userPath(id), { name: 'Current', email: 'cur@example.com' });
    const response = await app.client.put(userPath(id), { short_name: 'Cur' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    expect((await app.client.get(userPath(id))).body).toMatchObject({
      name: 'Current',
      email: 'cur@example.com',
      shortName: 'Cur',
    });
  });

  it('still validates snake_case values', async () => {
    const id = uniqueId('earlier');
    const response = await app.client.put(userPath(id), {
      email: 'x@example.com',
      profile_picture_url: 'https://example.com/a b.png',
    });
    expectError(response, 400, 'invalid_field', /profile_picture_url/);
    await expectUserAbsent(id);
  });
});

describe('PUT /v1/users/<ID> with the X-API-Generation: earlier header', () => {
  it('requires an e-mail to create even with camelCase keys only', async () => {
    const id = uniqueId('earlier');
    const response = await app.client.put(userPath(id), { name: 'No mail' }, EARLIER);
    expectError(response, 400, 'missing_field', /email/);
    await expectUserAbsent(id);
  });

  it('answers {success: true} on create and on update', async () => {
    const id = uniqueId('earlier');
    const created = await app.client.put(userPath(id), { name: 'Hdr', email: 'hdr@example.com' }, EARLIER);
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ success: true });
    const updated = await app.client.put(userPath(id), { name: 'Hdr 2' }, EARLIER);
    expect(updated.body).toEqual({ success: true });
    expect((await app.client.get(userPath(id))).body).toMatchObject({ name: 'Hdr 2', email: 'hdr@example.com' });
  });

  it('does not require an e-mail without the header and without snake_case keys', async () => {
    const id = uniqueId('current');
    const response = await app.client.put(userPath(id), { name: 'No mail' });
    expect(response.body).toEqual({ success: true, message: `You successfully created user ${id}` });
  });
});

describe('GET /v1/users with the X-API-Generation: earlier header', () => {
  it('answers a bare array of {id, name, email, first_name, last_name} in code-point order', async () => {
    const application = await createApplication(system, 'earlier list');
    const users: Record<string, object> = {
      b: { name: 'Bee', email: 'b@example.com', shortName: 'B', metadata: { x: 1 } },
      a: {},
      Z: { name: 'Zed', status: 'deleted' },
    };
    for (const [id, body] of Object.entries(users))
      expect((await application.client.put(userPath(id), body)).status).toBe(200);

    const response = await application.client.get('/v1/users', EARLIER);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { id: 'Z', name: 'Zed', email: null, first_name: null, last_name: null },
      { id: 'a', name: null, email: null, first_name: null, last_name: null },
      { id: 'b', name: 'Bee', email: 'b@example.com', first_name: null, last_name: null },
    ]);
  });

  it('answers an empty array for an application without users', async () => {
    const application = await createApplication(system, 'earlier empty');
    const response = await application.client.get('/v1/users', EARLIER);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('lists all users, beyond one page of 1000, ignoring limit', async () => {
    const application = await createApplication(system, 'earlier many');
    await system.sql.query(
      `INSERT INTO identity.users (application_id, external_id, email)
       SELECT $1, 'm' || lpad(i::text, 5, '0'), 'm' || i || '@example.com' FROM generate_series(1, 2003) AS i`,
      [application.id],
    );
    const response = await application.client.get('/v1/users?limit=10', EARLIER);
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body)).toBe(true);
    const listed: string[] = response.body.map((user: { id: string }) => user.id);
    expect(listed).toHaveLength(2003);
    expect(new Set(listed).size).toBe(2003);
    expect(listed).toEqual([...listed].sort(codePointCompare));
    expect(response.body[2002]).toEqual({
      id: 'm02003',
      name: null,
      email: 'm2003@example.com',
      first_name: null,
      last_name: null,
    });
  });

  it("lists only the calling application's users", async () => {
    const mine = await createApplication(system, 'earlier mine');
    const theirs = await createApplication(system, 'earlier theirs');
    await mine.client.put(userPath('mine'), {});
    await theirs.client.put(userPath('theirs'), {});
    const response = await mine.client.get('/v1/users', EARLIER);
    expect(response.body.map((user: { id: string }) => user.id)).toEqual(['mine']);
  });

  it('answers the paginated object without the header', async () => {
    const application = await createApplication(system, 'current list');
    await application.client.put(userPath('one'), {});
    const response = await application.client.get('/v1/users');
    expect(response.body).toMatchObject({ users: [{ id: 'one' }], pagination: { token: null, total: 1 } });
  });
});

describe('GET /v1/users/<ID> with the X-API-Generation: earlier header', () => {
  it('includes id, name, email, first_name, last_name and organizations', async () => {
    const group = uniqueId('org');
    expect((await app.client.put(`/v1/organizations/${encodeURIComponent(group)}`, { name: 'Org' })).status).toBe(200);
    const id = uniqueId('earlier');
    await app.client.put(userPath(id), { name: 'Org User', email: 'org@example.com', addGroups: [group] });
    const response = await app.client.get(userPath(id), EARLIER);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id,
      name: 'Org User',
      email: 'org@example.com',
      first_name: null,
      last_name: null,
      organizations: [group],
    });
  });

  it('answers 401 user_not_found for an unknown user', async () => {
    expectError(await app.client.get(userPath(uniqueId('nobody')), EARLIER), 401, 'user_not_found');
  });
});
