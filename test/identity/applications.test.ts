/**
 * The applications API:
 * /v1/applications and its /v1/projects alias, with customer tokens, through the gateway.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ApiClient,
  asCustomer,
  createApplication,
  pollAnswer,
  request,
  type TestApplication,
} from '../support/client.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';
import { expectError } from '../support/expect.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const OPTIONAL_FIELDS = 'iconURL, eventWebhookURL, eventWebhookSubscriptions, redirectURI and emailSettings';

let system: TestSystem;
let customer: ApiClient;
/** A second customer, with its own applications. */
let stranger: ApiClient;

systemForFile(async (started) => {
  system = started;
  customer = asCustomer(system);
  const { id: strangerId, secret: strangerSecret } = await system.addCustomer();
  stranger = new ApiClient(system, () => customerToken(strangerId, strangerSecret));
});


async function create(name: string, prefix: 'applications' | 'projects' = 'applications', client = customer) {
  const response = await client.post(`/v1/${prefix}`, { name });
  expect(response.status).toBe(200);
  const { applicationID: id, secret } = response.body;
  return { id, secret, client: new ApiClient(system, () => serverToken(id, secret)) } as TestApplication;
}

async function storedApplication(id: string) {
  const { rows } = await system.sql.query(
    'SELECT id, customer_id, name, secret_encrypted, icon_url FROM identity.applications WHERE id = $1',
    [id],
  );
  return rows[0] ?? null;
}

describe.each(['applications', 'projects'] as const)('/v1/%s', (prefix) => {
  const base = `/v1/${prefix}`;

  describe(`POST ${base}`, () => {
    it('creates an application and answers its id and a 64-hex secret, exactly', async () => {
      const response = await customer.post(base, { name: 'Created' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        success: true,
        message: 'Application created',
        applicationID: expect.stringMatching(UUID),
        secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      const stored = await storedApplication(response.body.applicationID);
      expect(stored).toMatchObject({ name: 'Created', customer_id: system.customer.id });
    });

    it('gives every application its own id and secret', async () => {
      const first = await create('first', prefix);
      const second = await create('second', prefix);
      expect(first.id).not.toBe(second.id);
      expect(first.secret).not.toBe(second.secret);
    });

    it("answers a secret that signs the new application's server tokens", async () => {
      const created = await create('usable', prefix);
      const verify = await created.client.get('/v1/verify');
      expect(verify.body).toEqual({ success: true, application_id: created.id, application_name: 'usable' });
    });

    it('stores the optional iconURL', async () => {
      const response = await customer.post(base, { name: 'With icon', iconURL: 'https://example.com/icon.png' });
      expect(response.status).toBe(200);
      expect((await storedApplication(response.body.applicationID)).icon_url).toBe('https://example.com/icon.png');
      const read = await customer.get(`${base}/${response.body.applicationID}`);
      expect(read.body.iconURL).toBe('https://example.com/icon.png');
    });

    it('without name → 400 missing_field', async () => {
      const response = await customer.post(base, { iconURL: 'https://example.com/i.png' });
      expectError(response, 400, 'missing_field');
      expect(response.body.message).toBe('Missing required field: name.');
    });

    it.each([
      ['empty', ''],
      ['a number', 5],
      ['null', null],
    ])('with name %s → 400 invalid_field', async (_name, name) => {
      const response = await customer.post(base, { name });
      expectError(response, 400, 'invalid_field');
      expect(response.body.message).toMatch(/^Input type for name is not valid/);
    });

    it('with an unexpected field → 400 unexpected_field naming it and the expected fields', async () => {
      const response = await customer.post(base, { name: 'x', colour: 'blue' });
      expectError(response, 400, 'unexpected_field');
      expect(response.body.message).toBe(
        `colour is not a valid field name for this request. Expected 1 required field: name. 5 optional fields: ${OPTIONAL_FIELDS}.`,
      );
    });

    it('with the secret as a field → 400 unexpected_field (secrets are generated)', async () => {
      expectError(await customer.post(base, { name: 'x', secret: 'mine' }), 400, 'unexpected_field');
    });

    it.each([
      ['not a URI', 'not a url'],
      ['without a scheme', 'example.com/icon.png'],
      ['with spaces', 'https://example.com/my icon.png'],
      ['a number', 42],
    ])('with iconURL %s → 400 invalid_field', async (_name, iconURL) => {
      const response = await customer.post(base, { name: 'x', iconURL });
      expectError(response, 400, 'invalid_field');
      expect(response.body.message).toMatch(/^Input type for iconURL is not valid/);
    });

    it('creates nothing when the body is invalid', async () => {
      const { rows: before } = await system.sql.query('SELECT count(*)::int AS n FROM identity.applications');
      await customer.post(base, { name: '' });
      await customer.post(base, { name: 'x', iconURL: 'nope' });
      await customer.post(base, { name: 'x', extra: 1 });
      const { rows: after } = await system.sql.query('SELECT count(*)::int AS n FROM identity.applications');
      expect(after[0].n).toBe(before[0].n);
    });

    it.each([
      ['empty', ''],
      ['an array', '[]'],
      ['malformed', '{"name":'],
    ])('with an %s body → 400 invalid_request', async (_name, rawBody) => {
      const response = await request(system.url, 'POST', base, {
        token: await customerToken(system.customer.id, system.customer.secret),
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      expectError(response, 400, 'invalid_request');
    });
  });

  describe(`GET ${base}`, () => {
    it("lists the customer's applications with id and name, in creation order, never the secret", async () => {
      const first = await create('list one', prefix);
      const second = await create('list two', prefix);
      const response = await customer.get(base);
      expect(response.status).toBe(200);
      expect(Array.isArray(response.body)).toBe(true);
      const ids = response.body.map((application: { id: string }) => application.id);
      expect(ids.indexOf(first.id)).toBeGreaterThanOrEqual(0);
      expect(ids.indexOf(second.id)).toBeGreaterThan(ids.indexOf(first.id));
      expect(response.body.find((a: { id: string }) => a.id === second.id)).toMatchObject({ id: second.id, name: 'list two' });
      for (const application of response.body) {
        expect(application).not.toHaveProperty('secret');
        expect(Object.keys(application)).toEqual(expect.arrayContaining(['id', 'name']));
      }
      const text = JSON.stringify(response.body);
      expect(text).not.toContain(first.secret);
      expect(text).not.toContain(second.secret);
    });

    it("never lists another customer's applications", async () => {
      const mine = await create('mine', prefix);
      const theirs = await create('theirs', prefix, stranger);
      const myList = (await customer.get(base)).body.map((a: { id: string }) => a.id);
      const theirList = (await stranger.get(base)).body.map((a: { id: string }) => a.id);
      expect(myList).toContain(mine.id);
      expect(myList).not.toContain(theirs.id);
      expect(theirList).toEqual(expect.arrayContaining([theirs.id]));
      expect(theirList).not.toContain(mine.id);
    });
  });

  describe(`GET ${base}/<ID>`, () => {
    it('answers one application without its secret', async () => {
      const created = await create('single', prefix);
      const response = await customer.get(`${base}/${created.id}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: created.id, name: 'single', iconURL: null });
      expect(response.body).not.toHaveProperty('secret');
      expect(JSON.stringify(response.body)).not.toContain(created.secret);
    });

    it("another customer's application → 401 application_not_found", async () => {
      const theirs = await create('hidden', prefix, stranger);
      expectError(await customer.get(`${base}/${theirs.id}`), 401, 'application_not_found');
    });

    it('an unknown id → 401 application_not_found', async () => {
      expectError(await customer.get(`${base}/${randomUUID()}`), 401, 'application_not_found');
    });

    it('an id that is not a UUID → 400 invalid_request', async () => {
      expectError(await customer.get(`${base}/not-a-uuid`), 400, 'invalid_request');
    });
  });

  describe(`PUT ${base}/<ID>`, () => {
    it('updates the name and answers the exact message', async () => {
      const created = await create('old name', prefix);
      const response = await customer.put(`${base}/${created.id}`, { name: 'new name' });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: `You successfully updated application ${created.id}` });
      expect((await customer.get(`${base}/${created.id}`)).body.name).toBe('new name');
      expect((await created.client.get('/v1/verify')).body.application_name).toBe('new name');
    });

    it('updates iconURL and changes only the fields provided', async () => {
      const created = await create('keep me', prefix);
      await customer.put(`${base}/${created.id}`, { iconURL: 'https://example.com/a.png' });
      let read = await customer.get(`${base}/${created.id}`);
      expect(read.body).toMatchObject({ name: 'keep me', iconURL: 'https://example.com/a.png' });

      await customer.put(`${base}/${created.id}`, { name: 'renamed' });
      read = await customer.get(`${base}/${created.id}`);
      expect(read.body).toMatchObject({ name: 'renamed', iconURL: 'https://example.com/a.png' });

      await customer.put(`${base}/${created.id}`, { iconURL: null });
      read = await customer.get(`${base}/${created.id}`);
      expect(read.body).toMatchObject({ name: 'renamed', iconURL: null });
    });

    it('with an empty object changes nothing and succeeds', async () => {
      const created = await create('unchanged', prefix);
      const response = await customer.put(`${base}/${created.id}`, {});
      expect(response.body).toEqual({ success: true, message: `You successfully updated application ${created.id}` });
      expect((await customer.get(`${base}/${created.id}`)).body.name).toBe('unchanged');
    });

    it('never changes the secret', async () => {
      const created = await create('stable secret', prefix);
      const before = (await storedApplication(created.id)).secret_encrypted;
      await customer.put(`${base}/${created.id}`, { name: 'still stable' });
      expect((await storedApplication(created.id)).secret_encrypted).toBe(before);
      expect((await created.client.get('/v1/verify')).status).toBe(200);
    });

    it('echoes the id as received in the message', async () => {
      const created = await create('echo', prefix);
      const upper = created.id.toUpperCase();
      const response = await customer.put(`${base}/${upper}`, { name: 'echoed' });
      expect(response.body).toEqual({ success: true, message: `You successfully updated application ${upper}` });
      expect((await customer.get(`${base}/${created.id}`)).body.name).toBe('echoed');
    });

    it('with a non-UUID id → 400 invalid_request', async () => {
      const response = await customer.put(`${base}/not-a-uuid`, { name: 'x' });
      expectError(response, 400, 'invalid_request');
      expect(response.body.message).toBe('Application ID is invalid');
    });

    it('with an unknown id → 401 application_not_found, checked before the body', async () => {
      expectError(await customer.put(`${base}/${randomUUID()}`, { name: 'x' }), 401, 'application_not_found');
      expectError(await customer.put(`${base}/${randomUUID()}`, { name: '' }), 401, 'application_not_found');
      expectError(await customer.put(`${base}/${randomUUID()}`, { bogus: 1 }), 401, 'application_not_found');
    });

    it("on another customer's application → 401 application_not_found and nothing changes", async () => {
      const theirs = await create('their name', prefix, stranger);
      expectError(await customer.put(`${base}/${theirs.id}`, { name: 'hijacked' }), 401, 'application_not_found');
      expect((await storedApplication(theirs.id)).name).toBe('their name');
    });

    it.each([
      ['an empty name', { name: '' }, 'invalid_field'],
      ['a numeric name', { name: 1 }, 'invalid_field'],
      ['an invalid iconURL', { iconURL: 'not a url' }, 'invalid_field'],
      ['an unexpected field', { secret: 'x' }, 'unexpected_field'],
    ])('with %s → 400 and nothing changes', async (_name, body, code) => {
      const created = await create('validated', prefix);
      expectError(await customer.put(`${base}/${created.id}`, body), 400, code);
      expect((await storedApplication(created.id)).name).toBe('validated');
    });

    it('with an unexpected field names every optional field among the expected ones, iconURL and redirectURI included', async () => {
      const created = await create('message', prefix);
      const response = await customer.put(`${base}/${created.id}`, { colour: 'blue' });
      expect(response.body.message).toBe(
        `colour is not a valid field name for this request. Expected 6 optional fields: name, ${OPTIONAL_FIELDS}.`,
      );
    });
  });

  describe(`DELETE ${base}/<ID>`, () => {
    it('with a wrong secret → 401 application_not_found saying the secret was wrong, and the application still exists', async () => {
      const created = await create('survivor', prefix);
      const wrongSecret = `The secret is not the current secret of application ${created.id}: nothing was deleted.`;
      expectError(await customer.delete(`${base}/${created.id}`, { secret: 'f'.repeat(64) }), 401, 'application_not_found', wrongSecret);
      const other = await create('other', prefix);
      expectError(await customer.delete(`${base}/${created.id}`, { secret: other.secret }), 401, 'application_not_found', wrongSecret);
      const unknown = randomUUID();
      expectError(await customer.delete(`${base}/${unknown}`, { secret: created.secret }), 401, 'application_not_found', `Application ${unknown} not found.`);
      expect((await customer.get(`${base}/${created.id}`)).status).toBe(200);
      expect((await created.client.get('/v1/users')).status).toBe(200);
      expect(await storedApplication(created.id)).not.toBeNull();
    });

    it('without secret → 400 missing_field, checked before the id', async () => {
      const created = await create('body first', prefix);
      const response = await customer.delete(`${base}/${created.id}`, {});
      expectError(response, 400, 'missing_field');
      expect(response.body.message).toBe('Missing required field: secret.');
      expectError(await customer.delete(`${base}/not-a-uuid`, {}), 400, 'missing_field');
      expect(await storedApplication(created.id)).not.toBeNull();
    });

    it('with an empty secret → 400 invalid_field', async () => {
      expectError(await customer.delete(`${base}/${randomUUID()}`, { secret: '' }), 400, 'invalid_field');
    });

    it('with an extra field → 400 unexpected_field', async () => {
      const created = await create('extra', prefix);
      expectError(
        await customer.delete(`${base}/${created.id}`, { secret: created.secret, force: true }),
        400,
        'unexpected_field',
      );
      expect(await storedApplication(created.id)).not.toBeNull();
    });

    it('without a body → 400 invalid_request', async () => {
      const created = await create('no body', prefix);
      expectError(await customer.delete(`${base}/${created.id}`), 400, 'invalid_request');
      expect(await storedApplication(created.id)).not.toBeNull();
    });

    it('with a non-UUID id and a valid body → 400 invalid_request', async () => {
      expectError(await customer.delete(`${base}/not-a-uuid`, { secret: 'x' }), 400, 'invalid_request');
    });

    it("on another customer's application, even with its secret → 401 application_not_found", async () => {
      const theirs = await create('protected', prefix, stranger);
      expectError(await customer.delete(`${base}/${theirs.id}`, { secret: theirs.secret }), 401, 'application_not_found');
      expect(await storedApplication(theirs.id)).not.toBeNull();
    });

    it('deletes the application and answers the exact message', async () => {
      const created = await create('doomed', prefix);
      const response = await customer.delete(`${base}/${created.id}`, { secret: created.secret });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ success: true, message: `You successfully deleted application ${created.id}` });
      expect(await storedApplication(created.id)).toBeNull();
      expectError(await customer.get(`${base}/${created.id}`), 401, 'application_not_found');
      expect((await customer.get(base)).body.map((a: { id: string }) => a.id)).not.toContain(created.id);
      // Deleting again finds nothing.
      expectError(await customer.delete(`${base}/${created.id}`, { secret: created.secret }), 401, 'application_not_found');
    });

    it("deletes the application's users, groups, memberships and sessions", async () => {
      const created = await create('with data', prefix);
      const keeper = await create('keeper', prefix);
      for (const application of [created, keeper]) {
        expect((await application.client.put('/v1/users/alice', { name: 'Alice' })).status).toBe(200);
        expect((await application.client.put('/v1/users/bob', { name: 'Bob' })).status).toBe(200);
        expect((await application.client.put('/v1/groups/team', { name: 'Team', members: ['alice', 'bob'] })).status).toBe(200);
      }
      const authorized = await request(system.url, 'POST', '/v1/authorize', {
        body: { signed_app_token: await serverToken(created.id, created.secret) },
      });
      expect(authorized.status).toBe(200);
      const count = async (table: string, id: string) =>
        (await system.sql.query(`SELECT count(*)::int AS n FROM identity.${table} WHERE application_id = $1`, [id])).rows[0].n;
      expect(await count('users', created.id)).toBe(2);
      expect(await count('sessions', created.id)).toBe(1);

      expect((await customer.delete(`${base}/${created.id}`, { secret: created.secret })).status).toBe(200);
      for (const table of ['users', 'groups', 'group_members', 'sessions']) expect(await count(table, created.id)).toBe(0);
      // Another application's data is untouched.
      expect(await count('users', keeper.id)).toBe(2);
      expect(await count('groups', keeper.id)).toBe(1);
      expect(await count('group_members', keeper.id)).toBe(2);
      expect((await keeper.client.get('/v1/users/alice')).status).toBe(200);
    });

    it("makes the application's server tokens fail at once → 401 application_not_found", async () => {
      const created = await create('cached', prefix);
      // The gateway caches the secret on first use; the deletion must evict it.
      expect((await created.client.get('/v1/users')).status).toBe(200);
      expect((await customer.delete(`${base}/${created.id}`, { secret: created.secret })).status).toBe(200);
      // Identity publishes the invalidation before it answers the DELETE.
      const next = await created.client.get('/v1/users');
      expectError(next, 401, 'application_not_found');
      expectError(await created.client.get('/v1/verify'), 401, 'application_not_found');
      expectError(
        await request(system.url, 'POST', '/v1/authorize', {
          body: { signed_app_token: await serverToken(created.id, created.secret) },
        }),
        401,
        'application_not_found',
      );
    });

    it('evicts the cached secret even when the path spells the id in upper case', async () => {
      const created = await create('shouting', prefix);
      expect((await created.client.get('/v1/users')).status).toBe(200);
      const upper = created.id.toUpperCase();
      const response = await customer.delete(`${base}/${upper}`, { secret: created.secret });
      expect(response.body).toEqual({ success: true, message: `You successfully deleted application ${upper}` });
      // Bounded: the invalidation travels over Redis; with the bug, this stays 200 for the cache TTL.
      const next = await pollAnswer(() => created.client.get('/v1/users'), (r) => r.status !== 200, 25);
      expectError(next, 401, 'application_not_found');
    });

    it('evicts cached access-token sessions too → 401 invalid_access_token', async () => {
      const created = await create('sessions', prefix);
      const authorized = await request(system.url, 'POST', '/v1/authorize', {
        body: { signed_app_token: await serverToken(created.id, created.secret) },
      });
      const accessToken = authorized.body.access_token;
      expect((await request(system.url, 'GET', '/v1/users', { token: accessToken })).status).toBe(200);
      await customer.delete(`${base}/${created.id.toUpperCase()}`, { secret: created.secret });
      const next = await pollAnswer(
        () => request(system.url, 'GET', '/v1/users', { token: accessToken }),
        (r) => r.status !== 200,
        25,
      );
      expectError(next, 401, 'invalid_access_token');
    });
  });
});

describe('the /v1/projects alias', () => {
  it('sees the same applications as /v1/applications', async () => {
    const viaProjects = await create('made as a project', 'projects');
    const viaApplications = await create('made as an application', 'applications');
    const projects = (await customer.get('/v1/projects')).body;
    const applications = (await customer.get('/v1/applications')).body;
    expect(projects).toEqual(applications);
    expect(projects.map((a: { id: string }) => a.id)).toEqual(expect.arrayContaining([viaProjects.id, viaApplications.id]));
    expect((await customer.get(`/v1/applications/${viaProjects.id}`)).body.name).toBe('made as a project');
  });

  it('updates and deletes applications created under /v1/applications', async () => {
    const created = await create('cross', 'applications');
    const updated = await customer.put(`/v1/projects/${created.id}`, { name: 'crossed' });
    expect(updated.body).toEqual({ success: true, message: `You successfully updated application ${created.id}` });
    expect((await customer.get(`/v1/applications/${created.id}`)).body.name).toBe('crossed');
    const deleted = await customer.delete(`/v1/projects/${created.id}`, { secret: created.secret });
    expect(deleted.body).toEqual({ success: true, message: `You successfully deleted application ${created.id}` });
    expectError(await customer.get(`/v1/applications/${created.id}`), 401, 'application_not_found');
  });
});

describe('authentication of the applications API', () => {
  it('refuses server tokens → 401 invalid_customer_token', async () => {
    const app = await createApplication(system, 'server token');
    expectError(await app.client.get('/v1/applications'), 401, 'invalid_customer_token');
    expectError(await app.client.post('/v1/projects', { name: 'x' }), 401, 'invalid_customer_token');
    expectError(await app.client.delete(`/v1/applications/${app.id}`, { secret: app.secret }), 401, 'invalid_customer_token');
    expect(await storedApplication(app.id)).not.toBeNull();
  });

  it('requires the header → 401 missing_authorization_header', async () => {
    expectError(await request(system.url, 'GET', '/v1/applications'), 401, 'missing_authorization_header');
    expectError(await request(system.url, 'POST', '/v1/projects', { body: { name: 'x' } }), 401, 'missing_authorization_header');
  });
});
