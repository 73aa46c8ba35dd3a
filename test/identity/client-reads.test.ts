/**
 * Client tokens (decision 53) and identity's /v1/client/* reads: viewer, user, users,
 * groupMembers and presence, each within the viewer's groups; user_details and group_details
 * applied as original-extras §4.2 says; every other token kind refused, and a client token
 * refused everywhere else.
 */
import { describe, expect, it } from 'vitest';
import { request, uniqueId, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { clientToken, serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('client reads app', (started) => ({ system, app } = started));

const enc = encodeURIComponent;

async function asClient(claims: Record<string, unknown>, path: string, options: { alg?: string; exp?: number; secret?: string } = {}) {
  const token = await clientToken(app.id, options.secret ?? app.secret, claims, options);
  return request(system.url, 'GET', path, { token });
}

/** Two groups: `mine` (viewer and mate), `theirs` (stranger); the viewer is in `mine` only. */
async function world() {
  const [viewer, mate, stranger, mine, theirs] = ['viewer', 'mate', 'stranger', 'mine', 'theirs'].map(uniqueId);
  for (const id of [viewer, mate, stranger])
    expect((await app.client.put(`/v1/users/${enc(id)}`, { name: `Name ${id}`, shortName: id === mate ? 'Matey' : undefined })).status).toBe(200);
  expect((await app.client.put(`/v1/groups/${enc(mine)}`, { name: 'Mine', members: [viewer, mate] })).status).toBe(200);
  expect((await app.client.put(`/v1/groups/${enc(theirs)}`, { name: 'Theirs', members: [stranger] })).status).toBe(200);
  return { viewer, mate, stranger, mine, theirs };
}

describe('client tokens', () => {
  it('accept HS256 and HS512 signed with the application secret, project_id winning over app_id', async () => {
    const { viewer } = await world();
    expect((await asClient({ user_id: viewer }, '/v1/client/viewer')).status).toBe(200);
    expect((await asClient({ user_id: viewer }, '/v1/client/viewer', { alg: 'HS512' })).status).toBe(200);
    const both = await asClient({ user_id: viewer, app_id: '00000000-0000-4000-8000-000000000000' }, '/v1/client/viewer');
    expect(both.status).toBe(200);
  });

  it('refuse with 403 invalid_session a bad signature, an expired token, an unknown or deleted user, a group not theirs', async () => {
    const { viewer, stranger, theirs } = await world();
    expectError(await asClient({ user_id: viewer }, '/v1/client/viewer', { secret: 'not the secret at all' }), 403, 'invalid_session');
    expectError(await asClient({ user_id: viewer }, '/v1/client/viewer', { exp: Math.floor(Date.now() / 1000) - 3600 }), 403, 'invalid_session', /expired/);
    expectError(await asClient({ user_id: uniqueId('nobody') }, '/v1/client/viewer'), 403, 'invalid_session', /Unable to load user/);
    expectError(await asClient({}, '/v1/client/viewer'), 403, 'invalid_session', /user_id/);
    expectError(await asClient({ user_id: viewer, group_id: theirs }, '/v1/client/viewer'), 403, 'invalid_session', 'The user is not a member of the group.');
    expectError(await asClient({ user_id: viewer, group_id: uniqueId('nogroup') }, '/v1/client/viewer'), 403, 'invalid_session', /not found/);
    expectError(await asClient({ user_id: viewer, group_details: { name: 'x' } }, '/v1/client/viewer'), 403, 'invalid_session', /group_details/);
    expectError(await request(system.url, 'GET', '/v1/client/viewer', {}), 403, 'invalid_session');
    // Marked deleted: no viewer any more.
    expect((await app.client.put(`/v1/users/${enc(stranger)}`, { status: 'deleted' })).status).toBe(200);
    expectError(await asClient({ user_id: stranger }, '/v1/client/viewer'), 403, 'invalid_session', /deleted/);
  });

  it('are refused on every other route, and server tokens on client routes', async () => {
    const { viewer } = await world();
    const token = await clientToken(app.id, app.secret, { user_id: viewer });
    const other = await request(system.url, 'GET', `/v1/users/${enc(viewer)}`, { token });
    expect(other.status).toBe(401);
    expect(other.body.error).toBe('invalid_app_token');
    const server = await request(system.url, 'GET', '/v1/client/viewer', { token: await serverToken(app.id, app.secret) });
    expectError(server, 403, 'invalid_session');
  });

  it('apply user_details and group_details: the user and group created, the user added to it', async () => {
    const [user, group] = [uniqueId('fresh'), uniqueId('fresh-group')];
    const answer = await asClient(
      { user_id: user, group_id: group, user_details: { name: 'Fresh', email: 'fresh@example.com' }, group_details: { name: 'Fresh group' } },
      '/v1/client/viewer',
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: user, name: 'Fresh', groupID: group, organizationID: group, groups: [group] });
    const stored = await app.client.get(`/v1/groups/${enc(group)}`);
    expect(stored.body).toMatchObject({ name: 'Fresh group', members: [user] });
    expectError(await asClient({ user_id: user, user_details: { email: 5 } }, '/v1/client/viewer'), 403, 'invalid_session', /user_details/);
  });
});

describe('the identity reads', () => {
  it('viewer: the user, display names, all their groups, their preferences', async () => {
    const { viewer, mine } = await world();
    const answer = await asClient({ user_id: viewer }, '/v1/client/viewer');
    expect(answer.body).toEqual({
      id: viewer,
      name: `Name ${viewer}`,
      shortName: null,
      displayName: `Name ${viewer}`,
      secondaryDisplayName: `Name ${viewer}`,
      profilePictureURL: null,
      metadata: {},
      organizationID: null,
      groupID: null,
      notificationPreferences: { sendViaEmail: true, sendViaSlack: true },
      isSlackConnected: false,
      organizationIsSlackConnected: false,
      groupIsSlackConnected: false,
      groups: [mine],
    });
    const set = await app.client.put(`/v1/users/${enc(viewer)}/preferences`, { key: 'notification_channels', value: { sendViaEmail: false } });
    expect(set.status).toBe(200);
    const after = await asClient({ user_id: viewer }, '/v1/client/viewer');
    expect(after.body.notificationPreferences).toEqual({ sendViaEmail: false, sendViaSlack: true });
  });

  it('user and users: only users sharing a group with the viewer', async () => {
    const { viewer, mate, stranger } = await world();
    const found = await asClient({ user_id: viewer }, `/v1/client/user/${enc(mate)}`);
    expect(found.body).toMatchObject({ id: mate, displayName: 'Matey', secondaryDisplayName: `Name ${mate}` });
    expectError(await asClient({ user_id: viewer }, `/v1/client/user/${enc(stranger)}`), 401, 'user_not_found');
    const many = await asClient({ user_id: viewer }, `/v1/client/users?users=${enc(JSON.stringify([mate, stranger, viewer]))}`);
    expect(Object.keys(many.body).sort()).toEqual([mate, stranger, viewer].sort());
    expect(many.body[stranger]).toBeNull();
    expect(many.body[mate].id).toBe(mate);
    expectError(await asClient({ user_id: viewer }, '/v1/client/users?users=notjson'), 400, 'invalid_request');
    expectError(await asClient({ user_id: viewer }, '/v1/client/users'), 400, 'invalid_request');
  });

  it('groupMembers: the members of a group of the viewer, nothing of another group', async () => {
    const { viewer, mate, mine, theirs } = await world();
    const members = await asClient({ user_id: viewer }, `/v1/client/groupMembers/${enc(mine)}`);
    expect(members.body.groupMembers.map((member: { id: string }) => member.id)).toEqual([viewer, mate]);
    expect(members.body).toMatchObject({ loading: false, hasMore: false });
    expect((await asClient({ user_id: viewer }, `/v1/client/groupMembers/${enc(theirs)}`)).body).toEqual({ groupMembers: [], loading: false, hasMore: false });
  });

  it("presence: the viewer's groups only", async () => {
    const { viewer, mate, stranger, mine, theirs } = await world();
    const location = { page: 'shared' };
    for (const [user, group] of [[mate, mine], [stranger, theirs]])
      expect((await app.client.put(`/v1/users/${enc(user)}/presence`, { location, groupID: group })).status).toBe(200);
    const seen = await asClient({ user_id: viewer }, `/v1/client/presence?location=${enc(JSON.stringify(location))}`);
    expect(seen.body).toEqual([{ id: mate, ephemeral: { locations: [location] } }]);
    expectError(await asClient({ user_id: viewer }, '/v1/client/presence'), 400, 'invalid_request', '"location" parameter is required');
  });
});
