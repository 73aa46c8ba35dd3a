/**
 * Organizations (earlier generation) through the gateway. Organizations and groups are one entity; only responses and the
 * not-found code differ.
 */
import { describe, expect, it } from 'vitest';
import { createApplication, request, uniqueId, type ApiClient, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';
import { expectError } from '../support/expect.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('organizations app', (started) => ({ system, app } = started));

const enc = encodeURIComponent;
const orgPath = (id: string) => `/v1/organizations/${enc(id)}`;
const orgMembersPath = (id: string) => `/v1/organizations/${enc(id)}/members`;
const INVALID_ORG_ID = 'Input type for orgID is not valid, expected identifier.';


/** Creates users with a name and e-mail derived from a short label. */
async function createUsers(client: ApiClient, count: number, label: string): Promise<{ id: string; name: string; email: string }[]> {
  const base = uniqueId(label);
  const users = Array.from({ length: count }, (_, index) => ({
    id: `${base}-${index}`,
    name: `${label} ${index}`,
    email: `${label}${index}@example.com`,
  }));
  for (const user of users) {
    const response = await client.put(`/v1/users/${enc(user.id)}`, { name: user.name, email: user.email });
    if (response.status !== 200) throw new Error(`creating user ${user.id} failed: ${JSON.stringify(response.body)}`);
  }
  return users;
}

const legacy = (user: { id: string; name: string | null; email: string | null }) => ({
  id: user.id,
  name: user.name,
  email: user.email,
  first_name: null,
  last_name: null,
});

async function createOrg(client: ApiClient, id: string, body: Record<string, unknown> = { name: `Org ${id}` }) {
  const response = await client.put(orgPath(id), body);
  expect(response.status).toBe(200);
  expect(response.body).toEqual({ success: true });
}

describe('PUT /v1/organizations/<ID>', () => {
  it('creates an organization and answers exactly {success: true}', async () => {
    const id = uniqueId('org-create');
    const response = await app.client.put(orgPath(id), { name: 'Acme' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    const read = await app.client.get(orgPath(id));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, name: 'Acme', members: [] });
  });

  it('updates an existing organization, answers exactly {success: true}, and changes only the provided fields', async () => {
    const id = uniqueId('org-update');
    const [member] = await createUsers(app.client, 1, 'upd');
    await createOrg(app.client, id, { name: 'Before', status: 'deleted', members: [member.id] });
    const response = await app.client.put(orgPath(id), { name: 'After' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    expect((await app.client.get(orgPath(id))).body).toMatchObject({ id, name: 'After', status: 'deleted', members: [member.id] });
  });

  it('replaces the membership exactly when members is given: absent members are removed', async () => {
    const id = uniqueId('org-replace');
    const [a, b, c] = await createUsers(app.client, 3, 'rep');
    await createOrg(app.client, id, { name: 'Replace', members: [a.id, b.id] });
    await createOrg(app.client, id, { members: [c.id, b.id] });
    const read = await app.client.get(orgPath(id));
    expect(read.body.members).toEqual([b.id, c.id]);
  });

  it('when creating without a name, it answers 400 missing_field and creates nothing', async () => {
    const id = uniqueId('org-no-name');
    expectError(await app.client.put(orgPath(id), { status: 'active' }), 400, 'missing_field', /name/);
    expectError(await app.client.put(orgPath(id), {}), 400, 'missing_field', /name/);
    expectError(await app.client.get(orgPath(id)), 401, 'organization_not_found');
  });

  it('when members lists an unknown user, it answers 401 user_not_found and creates nothing', async () => {
    const id = uniqueId('org-ghost');
    const ghost = uniqueId('ghost');
    expectError(await app.client.put(orgPath(id), { name: 'Ghosts', members: [ghost] }), 401, 'user_not_found', `Platform user ${ghost} not found.`);
    expectError(await app.client.get(orgPath(id)), 401, 'organization_not_found');
  });

  it('when the body is empty, has an unexpected field or a wrong type, it answers the validation codes', async () => {
    const id = uniqueId('org-validation');
    const token = await serverToken(app.id, app.secret);
    const empty = await request(system.url, 'PUT', orgPath(id), { token, rawBody: ' ', headers: { 'content-type': 'application/json' } });
    expectError(empty, 400, 'invalid_request');
    expectError(
      await app.client.put(orgPath(id), { name: 'x', bogus: 1 }),
      400,
      'unexpected_field',
      'bogus is not a valid field name for this request. Expected 4 optional fields: name, status, metadata and members.',
    );
    expectError(await app.client.put(orgPath(id), { name: 'x', members: ['a', []] }), 400, 'invalid_field', /^Input type for members\/1 /);
    expectError(await app.client.get(orgPath(id)), 401, 'organization_not_found');
  });

  it('is the same entity as a group: an organization written here reads back through /v1/groups', async () => {
    const id = uniqueId('org-is-group');
    const [member] = await createUsers(app.client, 1, 'same');
    await createOrg(app.client, id, { name: 'Shared', metadata: { plan: 'pro' }, members: [member.id] });
    expect((await app.client.get(`/v1/groups/${enc(id)}`)).body).toEqual({
      id,
      name: 'Shared',
      status: 'active',
      members: [member.id],
      connectedToChat: false,
      connectedToSlack: false,
      metadata: { plan: 'pro' },
    });
    const user = await app.client.get(`/v1/users/${enc(member.id)}`);
    expect(user.body.organizations).toEqual([id]);
  });
});

describe('POST /v1/organizations/<ID>/members', () => {
  it('answers the full membership after the change as earlier-generation user objects', async () => {
    const id = uniqueId('org-members');
    const [a, b, c] = await createUsers(app.client, 3, 'mem');
    await createOrg(app.client, id, { name: 'Members', members: [a.id, b.id] });
    const response = await app.client.post(orgMembersPath(id), { add: [c.id], remove: [a.id] });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([legacy(b), legacy(c)]);
    expect((await app.client.get(orgPath(id))).body.members).toEqual([b.id, c.id]);
  });

  it('answers the unchanged membership for {} and null name/email for users without them', async () => {
    const id = uniqueId('org-members-empty');
    const bare = uniqueId('bare');
    expect((await app.client.put(`/v1/users/${enc(bare)}`, {})).status).toBe(200);
    await createOrg(app.client, id, { name: 'Bare', members: [bare] });
    const response = await app.client.post(orgMembersPath(id), {});
    expect(response.status).toBe(200);
    expect(response.body).toEqual([{ id: bare, name: null, email: null, first_name: null, last_name: null }]);
  });

  it('answers an empty array when the last member is removed', async () => {
    const id = uniqueId('org-members-none');
    const [a] = await createUsers(app.client, 1, 'last');
    await createOrg(app.client, id, { name: 'Last', members: [a.id] });
    const response = await app.client.post(orgMembersPath(id), { remove: [a.id] });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('treats adding an existing member and removing a non-member as no-ops', async () => {
    const id = uniqueId('org-members-noop');
    const [a, outsider] = await createUsers(app.client, 2, 'noop');
    await createOrg(app.client, id, { name: 'Noop', members: [a.id] });
    const response = await app.client.post(orgMembersPath(id), { add: [a.id], remove: [outsider.id] });
    expect(response.status).toBe(200);
    expect(response.body).toEqual([legacy(a)]);
  });

  it('when the organization is unknown, it answers 401 organization_not_found even when the body is invalid', async () => {
    const id = uniqueId('org-missing');
    expectError(await app.client.post(orgMembersPath(id), { add: ['x'] }), 401, 'organization_not_found');
    expectError(await app.client.post(orgMembersPath(id), { add: 'x' }), 401, 'organization_not_found');
    expectError(await app.client.post(orgMembersPath(id), { bogus: 1 }), 401, 'organization_not_found');
  });

  it('when the same user is added and removed, it answers 400 invalid_field and changes nothing', async () => {
    const id = uniqueId('org-conflict');
    const [a, b] = await createUsers(app.client, 2, 'conf');
    await createOrg(app.client, id, { name: 'Conflict', members: [a.id] });
    expectError(await app.client.post(orgMembersPath(id), { add: [b.id], remove: [b.id] }), 400, 'invalid_field', `Platform member ${b.id} both added and removed.`);
    expect((await app.client.get(orgPath(id))).body.members).toEqual([a.id]);
  });

  it('when add or remove names an unknown user, it answers 401 user_not_found and changes nothing', async () => {
    const id = uniqueId('org-unknown-user');
    const [a, b] = await createUsers(app.client, 2, 'unk');
    const ghost = uniqueId('ghost');
    await createOrg(app.client, id, { name: 'Unknown', members: [a.id] });
    expectError(await app.client.post(orgMembersPath(id), { add: [b.id, ghost] }), 401, 'user_not_found');
    expectError(await app.client.post(orgMembersPath(id), { add: [b.id], remove: [ghost] }), 401, 'user_not_found');
    expect((await app.client.get(orgPath(id))).body.members).toEqual([a.id]);
  });

  it('when the path ID is invalid, it answers 400 invalid_field', async () => {
    expectError(await app.client.post(orgMembersPath('cord:x'), {}), 400, 'invalid_field', INVALID_ORG_ID);
  });
});

describe('GET /v1/organizations', () => {
  it('answers an array of every organization with id and name, in creation order', async () => {
    const other = await createApplication(system, 'org list');
    await createOrg(other.client, 'second-created-first', { name: 'One' });
    await createOrg(other.client, 'alpha', { name: 'Two', status: 'deleted' });
    const list = await other.client.get('/v1/organizations');
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body.map((org: any) => ({ id: org.id, name: org.name }))).toEqual([
      { id: 'second-created-first', name: 'One' },
      { id: 'alpha', name: 'Two' },
    ]);
  });

  it('answers an empty array when there are no organizations', async () => {
    const other = await createApplication(system, 'org list empty');
    const list = await other.client.get('/v1/organizations');
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
  });
});

describe('GET /v1/organizations/<ID>', () => {
  it('answers id, name and members in the order they were added', async () => {
    const id = uniqueId('org-get');
    const [a, b] = await createUsers(app.client, 2, 'get');
    await createOrg(app.client, id, { name: 'Readable', members: [b.id] });
    await app.client.post(orgMembersPath(id), { add: [a.id] });
    const read = await app.client.get(orgPath(id));
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, name: 'Readable', members: [b.id, a.id] });
  });

  it('when the organization is unknown, it answers 401 organization_not_found', async () => {
    expectError(await app.client.get(orgPath(uniqueId('org-unknown'))), 401, 'organization_not_found');
  });

  it('when the path ID is invalid, it answers 400 invalid_request', async () => {
    expectError(await app.client.get(orgPath('cord:abc')), 400, 'invalid_request');
    expectError(await app.client.get(orgPath('x'.repeat(321))), 400, 'invalid_request');
  });
});

describe('GET /v1/organizations/<ID>/members', () => {
  it('pages the members like the group endpoint', async () => {
    const id = uniqueId('org-list-members');
    const users = await createUsers(app.client, 3, 'page');
    await createOrg(app.client, id, { name: 'Paged', members: users.map((user) => user.id) });
    const first = await app.client.get(`${orgMembersPath(id)}?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.users).toHaveLength(2);
    expect(first.body.pagination.total).toBe(3);
    const second = await app.client.get(`${orgMembersPath(id)}?limit=2&token=${enc(first.body.pagination.token)}`);
    expect(second.body.pagination).toEqual({ token: null, total: 3 });
    const seen = [...first.body.users, ...second.body.users].map((user: any) => user.id).sort();
    expect(seen).toEqual(users.map((user) => user.id).sort());
  });

  it('when the organization is unknown, it answers 401 organization_not_found', async () => {
    expectError(await app.client.get(orgMembersPath(uniqueId('org-unknown'))), 401, 'organization_not_found');
  });
});

describe('DELETE /v1/organizations/<ID>', () => {
  it('deletes the organization, answers exactly {success: true}, and keeps its users', async () => {
    const id = uniqueId('org-delete');
    const [a] = await createUsers(app.client, 1, 'del');
    await createOrg(app.client, id, { name: 'Doomed', members: [a.id] });
    const response = await app.client.delete(orgPath(id));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    expectError(await app.client.get(orgPath(id)), 401, 'organization_not_found');
    expectError(await app.client.get(`/v1/groups/${enc(id)}`), 404, 'group_not_found');
    const user = await app.client.get(`/v1/users/${enc(a.id)}`);
    expect(user.status).toBe(200);
    expect(user.body.organizations).toEqual([]);
    expect((await app.client.get('/v1/organizations')).body.map((org: any) => org.id)).not.toContain(id);
  });

  it('when the organization is unknown, it answers 401 organization_not_found', async () => {
    expectError(await app.client.delete(orgPath(uniqueId('org-unknown'))), 401, 'organization_not_found');
  });

  it('when the path ID is invalid, it answers 400 invalid_field', async () => {
    expectError(await app.client.delete(orgPath('cord:abc')), 400, 'invalid_field', INVALID_ORG_ID);
  });
});

describe('POST /v1/organizations (legacy create)', () => {
  it('creates with 201, and a second create of the same ID answers 409 organization_already_exists without changing it', async () => {
    const id = uniqueId('org-legacy');
    const [a] = await createUsers(app.client, 1, 'leg');
    const first = await app.client.post('/v1/organizations', { id, name: 'Legacy', members: [a.id] });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ success: true });
    expect(first.body.message).toMatch(new RegExp(`created organization ${id}$`));
    expect((await app.client.get(orgPath(id))).body).toMatchObject({ id, name: 'Legacy', members: [a.id] });

    const second = await app.client.post('/v1/organizations', { id, name: 'Again' });
    expectError(second, 409, 'organization_already_exists');
    expect((await app.client.get(orgPath(id))).body).toMatchObject({ id, name: 'Legacy', members: [a.id] });
  });

  it('answers 409 also when the ID was created through PUT /v1/groups', async () => {
    const id = uniqueId('org-legacy-group');
    expect((await app.client.put(`/v1/groups/${enc(id)}`, { name: 'Group first' })).status).toBe(200);
    expectError(await app.client.post('/v1/organizations', { id, name: 'Org second' }), 409, 'organization_already_exists');
  });

  it('accepts a numeric id and stores it as its string form', async () => {
    const other = await createApplication(system, 'legacy numeric');
    expect((await other.client.post('/v1/organizations', { id: 77, name: 'Numeric' })).status).toBe(201);
    expect((await other.client.get('/v1/organizations/77')).body).toMatchObject({ id: '77', name: 'Numeric' });
    expectError(await other.client.post('/v1/organizations', { id: '77', name: 'Again' }), 409, 'organization_already_exists');
  });

  it('when id or name is missing, it answers 400 missing_field naming them', async () => {
    expectError(await app.client.post('/v1/organizations', {}), 400, 'missing_field', 'Missing required fields: id and name.');
    expectError(await app.client.post('/v1/organizations', { id: uniqueId('org') }), 400, 'missing_field', 'Missing required field: name.');
  });

  it('when the id, name or a member contains U+0000 (which cannot be stored), it answers 400 invalid_field, not 500', async () => {
    const id = uniqueId('org-legacy-nul');
    expectError(await app.client.post('/v1/organizations', { id: `${id}\u0000`, name: 'Nul' }), 400, 'invalid_field', /^Input type for id is not valid/);
    expectError(await app.client.post('/v1/organizations', { id, name: 'N\u0000l' }), 400, 'invalid_field', /^Input type for name is not valid/);
    expectError(await app.client.post('/v1/organizations', { id, name: 'Nul', members: ['m\u0000'] }), 400, 'invalid_field', /^Input type for members\/0 is not valid/);
    expectError(await app.client.get(orgPath(id)), 401, 'organization_not_found');
  });

  it('when members lists an unknown user, it answers 401 user_not_found and creates nothing', async () => {
    const id = uniqueId('org-legacy-ghost');
    expectError(await app.client.post('/v1/organizations', { id, name: 'Ghost', members: [uniqueId('ghost')] }), 401, 'user_not_found');
    expectError(await app.client.get(orgPath(id)), 401, 'organization_not_found');
  });
});

describe('tenant isolation', () => {
  it('application B neither sees nor changes application A\'s organization with the same ID', async () => {
    const a = await createApplication(system, 'org tenant A');
    const b = await createApplication(system, 'org tenant B');
    await createOrg(a.client, 'shared-id', { name: 'A org' });
    expectError(await b.client.get(orgPath('shared-id')), 401, 'organization_not_found');
    expectError(await b.client.post(orgMembersPath('shared-id'), {}), 401, 'organization_not_found');
    expectError(await b.client.delete(orgPath('shared-id')), 401, 'organization_not_found');
    expect((await b.client.get('/v1/organizations')).body).toEqual([]);
    expect((await b.client.post('/v1/organizations', { id: 'shared-id', name: 'B org' })).status).toBe(201);
    expect((await a.client.get(orgPath('shared-id'))).body).toMatchObject({ id: 'shared-id', name: 'A org' });
    expect((await b.client.get(orgPath('shared-id'))).body).toMatchObject({ id: 'shared-id', name: 'B org' });
  });
});
