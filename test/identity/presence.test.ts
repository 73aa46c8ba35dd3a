/**
 * Presence (decision 50): PUT /v1/users/<ID>/presence with its checks in order, ephemeral and
 * durable presence read back with GET /v1/users/<ID>/presence, expiry, and removal with the
 * user, the group and the application.
 */
import { createRedis } from '@collab/shared';
import type { ServerUpdatePresence } from '@cord-sdk/types';
import { describe, expect, it } from 'vitest';
import { asCustomer, createApplication, pollAnswer, uniqueId, type ApiClient, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { expectError } from '../support/expect.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('presence app', (started) => ({ system, app } = started));

const enc = encodeURIComponent;
const presencePath = (userId: string) => `/v1/users/${enc(userId)}/presence`;
const readPath = (userId: string, location: object, extra = '') => `${presencePath(userId)}?location=${enc(JSON.stringify(location))}${extra}`;

/** A group with the given members, each created first. */
async function groupWith(client: ApiClient, members: string[]): Promise<string> {
  const groupId = uniqueId('group');
  for (const id of members) expect((await client.put(`/v1/users/${enc(id)}`, { name: id })).status).toBe(200);
  expect((await client.put(`/v1/groups/${enc(groupId)}`, { name: groupId, members })).status).toBe(200);
  return groupId;
}

/** The body as @cord-sdk/server's callers type it, so that a drift from the original's request type fails to compile. */
async function present(client: ApiClient, userId: string, body: ServerUpdatePresence) {
  const response = await client.put(presencePath(userId), body);
  expect(response.body).toEqual({ success: true, message: `You successfully updated user ${userId} presence` });
  expect(response.status).toBe(200);
}

describe('PUT /v1/users/<ID>/presence', () => {
  it('answers each failed check of its order with its own error', async () => {
    const member = uniqueId('member');
    const outsider = uniqueId('outsider');
    const groupId = await groupWith(app.client, [member]);
    expect((await app.client.put(`/v1/users/${enc(outsider)}`, { name: 'o' })).status).toBe(200);
    const location = { page: 'p' };

    expectError(await app.client.put(presencePath('cord:reserved'), { location, groupID: groupId }), 400, 'invalid_field', 'Input type for userID is not valid, expected identifier.');
    expectError(await app.client.put(presencePath(member), { groupID: groupId }), 400, 'missing_field', /location/);
    expectError(await app.client.put(presencePath(member), { location, groupID: groupId, extra: 1 }), 400, 'unexpected_field', /extra/);
    expectError(await app.client.put(presencePath(member), { location: { nested: { a: 1 } }, groupID: groupId }), 400, 'invalid_field', /location/);
    expectError(await app.client.put(presencePath(member), { location, durable: 'yes', groupID: groupId }), 400, 'invalid_field', /durable/);
    expectError(await app.client.put(presencePath(member), { location }), 400, 'missing_field', /groupID/);
    // Both unknown: the user is reported.
    expectError(await app.client.put(presencePath(uniqueId('nobody')), { location, groupID: uniqueId('nogroup') }), 401, 'user_not_found');
    expectError(await app.client.put(presencePath(member), { location, groupID: uniqueId('nogroup') }), 401, 'organization_not_found');
    expectError(await app.client.put(presencePath(outsider), { location, groupID: groupId }), 401, 'user_not_in_organization');
    expectError(await app.client.put(presencePath(member), { location, groupID: groupId, durable: true, absent: true }), 400, 'invalid_request', 'Cannot remove durable presence');
    expectError(
      await app.client.put(presencePath(member), { location, groupID: groupId, exclusiveWithin: { page: 'other' } }),
      400,
      'invalid_request',
      'Cannot set a user present in a non-matching exclusivity region',
    );
    // Nothing of the refused updates was stored.
    expect((await app.client.get(readPath(member, location))).body).toEqual({ id: member, ephemeral: { locations: [] } });
  });

  it('keeps one location per exclusivity region, any number without one, and takes groupID over organizationID', async () => {
    const user = uniqueId('user');
    const groupId = await groupWith(app.client, [user]);
    await present(app.client, user, { location: { page: 'doc', block: 1 }, groupID: groupId, exclusiveWithin: { page: 'doc' } });
    await present(app.client, user, { location: { page: 'doc', block: 2 }, groupID: groupId, organizationID: uniqueId('ignored'), exclusiveWithin: { page: 'doc' } });
    await present(app.client, user, { location: { page: 'doc', side: 'left' }, organizationID: groupId });

    const partial = await app.client.get(readPath(user, { page: 'doc' }, '&partial_match=TRUE'));
    expect(partial.status).toBe(200);
    expect(partial.body).toEqual({ id: user, ephemeral: { locations: [{ block: 2, page: 'doc' }, { page: 'doc', side: 'left' }] } });
    const exact = await app.client.get(readPath(user, { block: 2, page: 'doc' }));
    expect(exact.body).toEqual({ id: user, ephemeral: { locations: [{ page: 'doc', block: 2 }] } });
  });

  it('removes ephemeral presence on absent only where the location matches', async () => {
    const user = uniqueId('user');
    const groupId = await groupWith(app.client, [user]);
    await present(app.client, user, { location: { page: 'a' }, groupID: groupId });
    await present(app.client, user, { location: { page: 'b' }, groupID: groupId, absent: true });
    expect((await app.client.get(readPath(user, { page: 'a' }))).body.ephemeral.locations).toEqual([{ page: 'a' }]);
    await present(app.client, user, { location: { page: 'a' }, groupID: groupId, absent: true });
    expect((await app.client.get(readPath(user, { page: 'a' }))).body.ephemeral.locations).toEqual([]);
  });

  it('records durable presence with its latest time, and leaves it out on exclude_durable', async () => {
    const user = uniqueId('user');
    const groupId = await groupWith(app.client, [user]);
    await present(app.client, user, { location: { page: 'x', part: 1 }, groupID: groupId, durable: true });
    const first = (await app.client.get(readPath(user, { page: 'x' }, '&partial_match=true'))).body.durable.timestamp;
    await present(app.client, user, { location: { part: 2, page: 'x' }, groupID: groupId, durable: true });

    const read = await app.client.get(readPath(user, { page: 'x' }, '&partial_match=true'));
    expect(read.body.ephemeral).toEqual({ locations: [] });
    expect(read.body.durable.location).toEqual({ page: 'x', part: 2 });
    expect(Date.parse(read.body.durable.timestamp)).toBeGreaterThanOrEqual(Date.parse(first));
    expect((await app.client.get(readPath(user, { page: 'x', part: 1 }))).body.durable.location).toEqual({ page: 'x', part: 1 });
    expect((await app.client.get(readPath(user, { page: 'x' }, '&partial_match=true&exclude_durable=true'))).body).toEqual({
      id: user,
      ephemeral: { locations: [] },
    });
  });
});

describe('GET /v1/users/<ID>/presence', () => {
  it('refuses a missing or malformed location and flag, and an unknown user', async () => {
    const user = uniqueId('user');
    await groupWith(app.client, [user]);
    expectError(await app.client.get(presencePath(user)), 400, 'invalid_request', '"location" parameter is required');
    expectError(await app.client.get(`${presencePath(user)}?location=notjson`), 400, 'invalid_field', '"location" must be a location');
    expectError(await app.client.get(`${presencePath(user)}?location=${enc('{"a":{"b":1}}')}`), 400, 'invalid_field', '"location" must be a location');
    expectError(await app.client.get(readPath(user, {}, '&partial_match=maybe')), 400, 'invalid_field', '"partial_match" must be a boolean');
    expectError(await app.client.get(readPath(uniqueId('nobody'), {})), 401, 'user_not_found');
  });

  it('never shows one application the presence of another', async () => {
    const other = await createApplication(system, 'presence other');
    const user = uniqueId('user');
    const groupId = await groupWith(app.client, [user]);
    await present(app.client, user, { location: { page: 'secret' }, groupID: groupId });
    expectError(await other.client.get(readPath(user, { page: 'secret' })), 401, 'user_not_found');
  });
});

describe('deletion', () => {
  it('removes the presence of a deleted user, of a deleted group and of a member who left', async () => {
    const [gone, stays, leaves] = [uniqueId('gone'), uniqueId('stays'), uniqueId('leaves')];
    const groupId = await groupWith(app.client, [gone, stays, leaves]);
    const otherGroup = await groupWith(app.client, [stays]);
    for (const user of [gone, stays, leaves]) {
      await present(app.client, user, { location: { page: 'p' }, groupID: groupId });
      await present(app.client, user, { location: { page: 'p' }, groupID: groupId, durable: true });
    }
    await present(app.client, stays, { location: { page: 'p' }, groupID: otherGroup });

    expect((await app.client.delete(`/v1/users/${enc(gone)}`, { permanently_delete: true })).status).toBe(200);
    expect((await app.client.post(`/v1/groups/${enc(groupId)}/members`, { remove: [leaves] })).status).toBe(200);
    // Recreated under the same id, the user starts with no presence.
    await app.client.put(`/v1/users/${enc(gone)}`, { name: 'again', addGroups: [groupId] });
    expect((await app.client.get(readPath(gone, { page: 'p' }))).body).toEqual({ id: gone, ephemeral: { locations: [] } });
    expect((await app.client.get(readPath(leaves, { page: 'p' }))).body).toEqual({ id: leaves, ephemeral: { locations: [] } });

    expect((await app.client.delete(`/v1/groups/${enc(groupId)}`)).status).toBe(200);
    expect((await app.client.get(readPath(stays, { page: 'p' }))).body).toEqual({ id: stays, ephemeral: { locations: [{ page: 'p' }] } });
  });

  it('removes every Redis key of a deleted application', async () => {
    const doomed = await createApplication(system, 'presence doomed');
    const user = uniqueId('user');
    const groupId = await groupWith(doomed.client, [user]);
    await present(doomed.client, user, { location: { page: 'p' }, groupID: groupId });
    const redis = createRedis(system.env.REDIS_URL);
    try {
      const pattern = `${system.env.REDIS_PREFIX}:presence:{${doomed.id}}:*`;
      expect(await redis.keys(pattern)).toHaveLength(1);
      const deleted = await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret });
      expect(deleted.status).toBe(200);
      expect(await redis.keys(pattern)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});

describe('expiry', () => {
  let short: TestSystem;
  let shortApp: TestApplication;
  systemWithApplication('presence expiry', (started) => ({ system: short, app: shortApp } = started), { env: { PRESENCE_TTL_SECONDS: '1' } });

  it('forgets ephemeral presence that is not renewed, and keeps durable presence', async () => {
    const user = uniqueId('user');
    const groupId = await groupWith(shortApp.client, [user]);
    await present(shortApp.client, user, { location: { page: 'p' }, groupID: groupId });
    await present(shortApp.client, user, { location: { page: 'p' }, groupID: groupId, durable: true });
    const read = () => shortApp.client.get(readPath(user, { page: 'p' }));
    const expired = await pollAnswer(read, (response) => response.body.ephemeral?.locations.length === 0, 500);
    expect(expired.body.ephemeral).toEqual({ locations: [] });
    expect(expired.body.durable.location).toEqual({ page: 'p' });
    expect(short).toBeDefined();
  });
});
