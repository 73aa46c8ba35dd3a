/**
 * Presence (original-extras §1, decision 50) through the gateway: ephemeral presence in Redis with
 * its expiry, durable presence as rows, the checks of §1.2 in their order, the server-token read,
 * and presence removed with its user, group or application.
 */
import { createRedis, type RedisClient } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asCustomer, createApplication, request, uniqueId, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { clientToken } from '../support/tokens.js';

const TTL_SECONDS = 7;

let system: TestSystem;
let app: TestApplication;
let redis: RedisClient;

systemWithApplication('presence app', (started) => ({ system, app } = started), { env: { PRESENCE_TTL_SECONDS: String(TTL_SECONDS) } });

beforeAll(() => {
  redis = createRedis(system.env.REDIS_URL);
});
afterAll(() => redis.quit());

const enc = encodeURIComponent;
const presencePath = (userID: string) => `/v1/users/${enc(userID)}/presence`;
const readPath = (userID: string, location: unknown, extra = '') => `${presencePath(userID)}?location=${enc(JSON.stringify(location))}${extra}`;

/** A group with the given members (created), in `target`'s application. */
async function groupWith(target: TestApplication, members: string[]): Promise<string> {
  for (const id of members) expect((await target.client.put(`/v1/users/${enc(id)}`, { name: id })).status).toBe(200);
  const groupID = uniqueId('group');
  expect((await target.client.put(`/v1/groups/${enc(groupID)}`, { name: groupID, members })).status).toBe(200);
  return groupID;
}

async function presenceKeys(applicationId: string): Promise<string[]> {
  return redis.keys(`${system.env.REDIS_PREFIX}:presence:${applicationId}:*`);
}

describe('PUT /v1/users/<ID>/presence, ephemeral', () => {
  it('answers success, and the server read finds the location until it is left', async () => {
    const user = uniqueId('user');
    const groupID = await groupWith(app, [user]);
    const location = { page: 'doc', section: 2 };
    const put = await app.client.put(presencePath(user), { location, groupID });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ success: true, message: `You successfully updated user ${user} presence` });

    expect((await app.client.get(readPath(user, { section: 2, page: 'doc' }))).body).toEqual([{ id: user, ephemeral: { locations: [location] } }]);
    expect((await app.client.get(readPath(user, { page: 'other' }))).body).toEqual([]);

    // Leaving another location changes nothing; leaving this one removes it.
    expect((await app.client.put(presencePath(user), { location: { page: 'other' }, groupID, absent: true })).status).toBe(200);
    expect((await app.client.get(readPath(user, location))).body).toHaveLength(1);
    expect((await app.client.put(presencePath(user), { location, groupID, absent: true })).status).toBe(200);
    expect((await app.client.get(readPath(user, location))).body).toEqual([]);
  });

  it('expires PRESENCE_TTL_SECONDS after the last update, each update renewing it', async () => {
    const user = uniqueId('user');
    const groupID = await groupWith(app, [user]);
    expect((await app.client.put(presencePath(user), { location: { page: 'a' }, groupID })).status).toBe(200);
    const keys = await presenceKeys(app.id);
    expect(keys.length).toBeGreaterThan(0);
    for (const found of keys) {
      const ttl = await redis.pttl(found);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(TTL_SECONDS * 1000);
    }
  });

  it('keeps one location per exclusivity region, and any number without one', async () => {
    const user = uniqueId('user');
    const groupID = await groupWith(app, [user]);
    const region = { doc: 'd1' };
    expect((await app.client.put(presencePath(user), { location: { doc: 'd1', part: 1 }, exclusiveWithin: region, groupID })).status).toBe(200);
    expect((await app.client.put(presencePath(user), { location: { doc: 'd1', part: 2 }, exclusiveWithin: region, groupID })).status).toBe(200);
    expect((await app.client.put(presencePath(user), { location: { doc: 'd2' }, groupID })).status).toBe(200);
    expect((await app.client.put(presencePath(user), { location: { doc: 'd3' }, groupID })).status).toBe(200);

    const partial = await app.client.get(readPath(user, { doc: 'd1' }, '&partial_match=TRUE'));
    expect(partial.body).toEqual([{ id: user, ephemeral: { locations: [{ doc: 'd1', part: 2 }] } }]);
    const all = await app.client.get(readPath(user, {}, '&partial_match=true'));
    // Fewer keys first, then by JSON text.
    expect(all.body).toEqual([{ id: user, ephemeral: { locations: [{ doc: 'd2' }, { doc: 'd3' }, { doc: 'd1', part: 2 }] } }]);
  });
});

describe('PUT /v1/users/<ID>/presence, durable', () => {
  it('records the latest durable location, read back unless excluded', async () => {
    const user = uniqueId('user');
    const groupID = await groupWith(app, [user]);
    expect((await app.client.put(presencePath(user), { location: { page: 'p', part: 1 }, groupID, durable: true })).status).toBe(200);
    expect((await app.client.put(presencePath(user), { location: { page: 'p', part: 2 }, groupID, durable: true })).status).toBe(200);

    const exact = await app.client.get(readPath(user, { page: 'p', part: 1 }));
    expect(exact.body).toEqual([{ id: user, ephemeral: { locations: [] }, durable: { location: { page: 'p', part: 1 }, timestamp: expect.any(String) } }]);
    const latest = await app.client.get(readPath(user, { page: 'p' }, '&partial_match=true'));
    expect(latest.body[0].durable.location).toEqual({ page: 'p', part: 2 });
    expect((await app.client.get(readPath(user, { page: 'p' }, '&partial_match=true&exclude_durable=true'))).body).toEqual([]);
  });
});

describe('PUT /v1/users/<ID>/presence, checks in the order of §1.2', () => {
  it('refuses each failure with its code, the first failing check winning', async () => {
    const member = uniqueId('user');
    const outsider = uniqueId('user');
    const groupID = await groupWith(app, [member]);
    expect((await app.client.put(`/v1/users/${enc(outsider)}`, { name: 'outsider' })).status).toBe(200);
    const location = { page: 'x' };

    expectError(await app.client.put(presencePath('cord:bad'), {}), 400, 'invalid_field', 'Input type for userID is not valid, expected identifier.');
    expectError(await app.client.put(presencePath(member), { groupID }), 400, 'missing_field', /location/);
    expectError(await app.client.put(presencePath(member), { location, groupID, extra: 1 }), 400, 'unexpected_field', /extra/);
    expectError(await app.client.put(presencePath(member), { location: { nested: { no: 1 } }, groupID }), 400, 'invalid_field', /location/);
    expectError(await app.client.put(presencePath(member), { location, groupID, durable: 'yes' }), 400, 'invalid_field', /durable/);
    expectError(await app.client.put(presencePath(member), { location }), 400, 'missing_field', /groupID/);
    expectError(await app.client.put(presencePath(uniqueId('nobody')), { location, groupID: uniqueId('nogroup') }), 401, 'user_not_found');
    expectError(await app.client.put(presencePath(member), { location, groupID: uniqueId('nogroup') }), 401, 'organization_not_found');
    expectError(await app.client.put(presencePath(outsider), { location, groupID }), 401, 'user_not_in_organization');
    expectError(await app.client.put(presencePath(member), { location, groupID, durable: true, absent: true }), 400, 'invalid_request', 'Cannot remove durable presence');
    expectError(
      await app.client.put(presencePath(member), { location, groupID, exclusiveWithin: { page: 'y' } }),
      400,
      'invalid_request',
      'Cannot set a user present in a non-matching exclusivity region',
    );
    expect(await app.client.get(readPath(member, location)).then((response) => response.body)).toEqual([]);
  });

  it('takes organizationID as the group, and groupID when both are sent', async () => {
    const user = uniqueId('user');
    const groupID = await groupWith(app, [user]);
    expect((await app.client.put(presencePath(user), { location: { at: 1 }, organizationID: groupID })).status).toBe(200);
    expect((await app.client.put(presencePath(user), { location: { at: 2 }, groupID, organizationID: uniqueId('nogroup') })).status).toBe(200);
    expect((await app.client.get(readPath(user, {}, '&partial_match=true'))).body[0].ephemeral.locations).toEqual([{ at: 1 }, { at: 2 }]);
  });
});

describe('GET /v1/users/<ID>/presence', () => {
  it('refuses a missing or malformed query, and an unknown user', async () => {
    const user = uniqueId('user');
    await groupWith(app, [user]);
    expectError(await app.client.get(presencePath(user)), 400, 'invalid_request', '"location" parameter is required');
    expectError(await app.client.get(`${presencePath(user)}?location=not-json`), 400, 'invalid_field', '"location" must be a location');
    expectError(await app.client.get(readPath(user, { a: { b: 1 } })), 400, 'invalid_field', '"location" must be a location');
    expectError(await app.client.get(readPath(user, { a: 1 }, '&partial_match=maybe')), 400, 'invalid_field', '"partial_match" must be a boolean');
    expectError(await app.client.get(readPath(user, { a: 1 }, '&exclude_durable=1')), 400, 'invalid_field', '"exclude_durable" must be a boolean');
    expectError(await app.client.get(readPath(uniqueId('nobody'), { a: 1 })), 401, 'user_not_found');
  });

  it("never answers another application's presence", async () => {
    const other = await createApplication(system, 'presence other');
    const user = uniqueId('user');
    const groupID = await groupWith(other, [user]);
    expect((await other.client.put(presencePath(user), { location: { a: 1 }, groupID, durable: true })).status).toBe(200);
    expectError(await app.client.get(readPath(user, { a: 1 })), 401, 'user_not_found');
  });
});

describe('presence goes with what it belongs to', () => {
  it('is removed with its user and with its group', async () => {
    const [leaving, staying] = [uniqueId('user'), uniqueId('user')];
    const groupID = await groupWith(app, [leaving, staying]);
    for (const user of [leaving, staying]) {
      expect((await app.client.put(presencePath(user), { location: { a: 1 }, groupID })).status).toBe(200);
      expect((await app.client.put(presencePath(user), { location: { a: 1 }, groupID, durable: true })).status).toBe(200);
    }
    const rows = async () => (await system.sql.query(`SELECT count(*)::int AS n FROM identity.durable_presence WHERE application_id = $1`, [app.id])).rows[0].n;
    const before = { keys: (await presenceKeys(app.id)).length, rows: await rows() };

    expect((await app.client.delete(`/v1/users/${enc(leaving)}`, { permanently_delete: true })).status).toBe(200);
    expect({ keys: (await presenceKeys(app.id)).length, rows: await rows() }).toEqual({ keys: before.keys - 1, rows: before.rows - 1 });
    expect((await app.client.get(readPath(staying, { a: 1 }))).body).toHaveLength(1);

    expect((await app.client.delete(`/v1/groups/${enc(groupID)}`)).status).toBe(200);
    expect({ keys: (await presenceKeys(app.id)).length, rows: await rows() }).toEqual({ keys: before.keys - 2, rows: before.rows - 2 });
    expect((await app.client.get(readPath(staying, { a: 1 }))).body).toEqual([]);
  });

  it('is removed with its application', async () => {
    const doomed = await createApplication(system, 'presence doomed');
    const user = uniqueId('user');
    const groupID = await groupWith(doomed, [user]);
    expect((await doomed.client.put(presencePath(user), { location: { a: 1 }, groupID })).status).toBe(200);
    expect(await presenceKeys(doomed.id)).toHaveLength(1);
    expect((await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret })).status).toBe(200);
    expect(await presenceKeys(doomed.id)).toEqual([]);
  });
});

describe('GET /v1/client/presence (client token)', () => {
  const clientPath = (location: unknown, extra = '') => `/v1/client/presence?location=${enc(JSON.stringify(location))}${extra}`;
  const asViewer = async (claims: { user_id: string; group_id?: string }, options: { alg?: 'HS256' | 'HS512'; exp?: number; secret?: string } = {}) =>
    ({ authorization: `Bearer ${await clientToken(app.id, options.secret ?? app.secret, claims, options)}` });
  const read = async (path: string, headers: Record<string, string>) => request(system.url, 'GET', path, { headers });

  it("answers everyone's presence in the viewer's groups, and nothing of another group", async () => {
    const [viewer, mate, stranger] = [uniqueId('viewer'), uniqueId('mate'), uniqueId('stranger')];
    const shared = await groupWith(app, [viewer, mate]);
    const other = await groupWith(app, [stranger, mate]);
    expect((await app.client.put(presencePath(mate), { location: { page: 'p' }, groupID: shared })).status).toBe(200);
    expect((await app.client.put(presencePath(viewer), { location: { page: 'p', part: 1 }, groupID: shared, durable: true })).status).toBe(200);
    expect((await app.client.put(presencePath(stranger), { location: { page: 'p' }, groupID: other })).status).toBe(200);

    const all = await read(clientPath({ page: 'p' }, '&partial_match=true'), await asViewer({ user_id: viewer }, { alg: 'HS256' }));
    expect(all.status).toBe(200);
    expect(all.body).toEqual([
      { id: mate, ephemeral: { locations: [{ page: 'p' }] } },
      { id: viewer, ephemeral: { locations: [] }, durable: { location: { page: 'p', part: 1 }, timestamp: expect.any(String) } },
    ]);
    const exact = await read(clientPath({ page: 'p' }, '&exclude_durable=true'), await asViewer({ user_id: viewer, group_id: shared }));
    expect(exact.body).toEqual([{ id: mate, ephemeral: { locations: [{ page: 'p' }] } }]);
    // The stranger's group is not the viewer's: a token naming it is refused.
    expectError(await read(clientPath({ page: 'p' }), await asViewer({ user_id: viewer, group_id: other })), 403, 'invalid_session', 'The user is not a member of the group.');
  });

  it('refuses a token of another kind, a bad signature, an expired token or an unknown user with 403 invalid_session', async () => {
    const viewer = uniqueId('viewer');
    await groupWith(app, [viewer]);
    const path = clientPath({ page: 'p' });
    expectError(await app.client.get(path), 403, 'invalid_session');
    expectError(await read(path, {}), 403, 'invalid_session');
    expectError(await read(path, await asViewer({ user_id: viewer }, { secret: 'not the secret' })), 403, 'invalid_session', 'The client token is not signed with the application secret.');
    expectError(await read(path, await asViewer({ user_id: viewer }, { exp: Math.floor(Date.now() / 1000) - 3600 })), 403, 'invalid_session', 'The client token has expired.');
    expectError(await read(path, await asViewer({ user_id: uniqueId('nobody') })), 403, 'invalid_session', /Unable to load user/);
    expectError(await read(path, await asViewer({ user_id: 'lone \ud800 surrogate' })), 403, 'invalid_session', /user_id/);
    expectError(await read(path, await asViewer({ user_id: 'x'.repeat(129) })), 403, 'invalid_session', /user_id/);
    expectError(await read(path, await asViewer({ user_id: viewer, group_id: uniqueId('nogroup') })), 403, 'invalid_session', /not found/);
    // A client token works on no other route.
    expectError(await read(presencePath(viewer) + '?location=%7B%7D', await asViewer({ user_id: viewer })), 401, 'invalid_app_token');
  });

  it('checks the query after the token', async () => {
    const viewer = uniqueId('viewer');
    await groupWith(app, [viewer]);
    const headers = await asViewer({ user_id: viewer });
    expectError(await read('/v1/client/presence', headers), 400, 'invalid_request', '"location" parameter is required');
    expectError(await read(clientPath({ a: 1 }, '&partial_match=x'), headers), 400, 'invalid_field', '"partial_match" must be a boolean');
  });
});
