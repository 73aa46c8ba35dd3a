/**
 * The client-token user reads (original-extras §4.5, decision 53): a user, users by ID and a
 * group's members, each limited to the viewer's groups.
 */
import { describe, expect, it } from 'vitest';
import { request, uniqueId, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { clientToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('client users app', (started) => ({ system, app } = started));

const enc = encodeURIComponent;

async function groupWith(members: string[], body: Record<string, unknown> = {}): Promise<string> {
  const groupID = uniqueId('group');
  expect((await app.client.put(`/v1/groups/${enc(groupID)}`, { name: groupID, members, ...body })).status).toBe(200);
  return groupID;
}

async function as(viewer: string, groupId?: string) {
  const token = await clientToken(app.id, app.secret, groupId ? { user_id: viewer, group_id: groupId } : { user_id: viewer });
  return (path: string) => request(system.url, 'GET', path, { headers: { authorization: `Bearer ${token}` } });
}

describe('client user reads', () => {
  it("answers users who share one of the viewer's groups, and no one else", async () => {
    const [viewer, mate, stranger] = [uniqueId('viewer'), uniqueId('mate'), uniqueId('stranger')];
    expect((await app.client.put(`/v1/users/${enc(viewer)}`, { name: 'Vi Ewer' })).status).toBe(200);
    expect((await app.client.put(`/v1/users/${enc(mate)}`, { name: 'Mate Name', shortName: 'Mate', metadata: { a: 1 } })).status).toBe(200);
    expect((await app.client.put(`/v1/users/${enc(stranger)}`, {})).status).toBe(200);
    const shared = await groupWith([viewer, mate]);
    const other = await groupWith([stranger]);
    const get = await as(viewer);

    const user = await get(`/v1/client/user/${enc(mate)}`);
    expect(user.status).toBe(200);
    expect(user.body).toEqual({
      id: mate,
      name: 'Mate Name',
      shortName: 'Mate',
      displayName: 'Mate',
      secondaryDisplayName: 'Mate Name',
      profilePictureURL: null,
      metadata: { a: 1 },
    });
    expectError(await get(`/v1/client/user/${enc(stranger)}`), 401, 'user_not_found');

    const users = await get(`/v1/client/users?users=${enc(JSON.stringify([mate, stranger, 'nobody', viewer]))}`);
    expect(users.status).toBe(200);
    expect(Object.keys(users.body)).toEqual([mate, stranger, 'nobody', viewer]);
    expect(users.body[stranger]).toBeNull();
    expect(users.body.nobody).toBeNull();
    expect(users.body[viewer]).toMatchObject({ id: viewer, displayName: 'Vi Ewer', secondaryDisplayName: 'Vi Ewer' });
    expectError(await get('/v1/client/users?users=notjson'), 400, 'invalid_request', 'Invalid request.');
    expectError(await get(`/v1/client/users?users=${enc('[{"a": 1}]')}`), 400, 'invalid_request', 'Invalid request.');

    // A token naming a group limits the scope to it.
    const inShared = await as(viewer, shared);
    expect((await inShared(`/v1/client/user/${enc(mate)}`)).status).toBe(200);

    const members = await get(`/v1/client/groupMembers/${enc(shared)}`);
    expect(members.body).toEqual({ groupMembers: [expect.objectContaining({ id: viewer }), expect.objectContaining({ id: mate })], loading: false, hasMore: false });
    expect((await get(`/v1/client/groupMembers/${enc(other)}`)).body).toEqual({ groupMembers: [], loading: false, hasMore: false });
    expect((await get(`/v1/client/groupMembers/${enc(uniqueId('nogroup'))}`)).body).toEqual({ groupMembers: [], loading: false, hasMore: false });
  });

  it('gives a group its first 10 active members, hasMore when the page is full', async () => {
    const ids = Array.from({ length: 11 }, (_, index) => uniqueId(`m${index}`));
    for (const id of ids) expect((await app.client.put(`/v1/users/${enc(id)}`, { name: id, status: id === ids[3] ? 'deleted' : 'active' })).status).toBe(200);
    const groupID = await groupWith(ids);
    const members = await (await as(ids[0]))(`/v1/client/groupMembers/${enc(groupID)}`);
    expect(members.body.groupMembers.map((member: { id: string }) => member.id)).toEqual(ids.filter((id) => id !== ids[3]));
    expect(members.body.hasMore).toBe(true);
  });

  it('refuses a server token on client routes', async () => {
    expectError(await app.client.get(`/v1/client/user/${enc('someone')}`), 403, 'invalid_session');
  });
});
