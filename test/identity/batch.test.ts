/**
 * POST /v1/batch and GET /v1/batch/<jobID> through the gateway, applied by a BullMQ job on real
 * PostgreSQL and Redis: validation before anything is written, all or nothing, the success message,
 * aliases and duplicates, the 202 answer when the job outlasts the wait, and concurrent batches.
 */
import net, { type AddressInfo } from 'node:net';
import http, { type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { createLogger, INTERNAL_HEADERS, startWorker, type JobData, type JobHandlers } from '@collab/shared';
import type { Express } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteRedisPrefix } from '@collab/shared/devkit';
import { loadIdentityConfig } from '../../services/identity/src/config.js';
import { createIdentityDataSource } from '../../services/identity/src/data-source.js';
import { batchJobs } from '../../services/identity/src/jobs/batch.jobs.js';
import { createIdentityService } from '../../services/identity/src/service.js';
import { createApplication, uniqueId, type ApiClient, type ApiResponse, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { pollUntil } from '../support/processes.js';
import { startSystem, systemWithApplication, type TestSystem } from '../support/system.js';

const logger = createLogger('test', 'silent');

let system: TestSystem;
let app: TestApplication;

// The request waits for its job up to BATCH_WAIT_MS (default 8 s); 20 s here so that the 200
// answers below do not depend on how fast this machine applies 10,000 users.
systemWithApplication('batch app', (started) => ({ system, app } = started), { env: { BATCH_WAIT_MS: '20000' } });

const enc = encodeURIComponent;
const userPath = (id: string) => `/v1/users/${enc(id)}`;
const groupPath = (id: string) => `/v1/groups/${enc(id)}`;

function ids(prefix: string, count: number): string[] {
  const base = uniqueId(prefix);
  return Array.from({ length: count }, (_, index) => `${base}-${index}`);
}

function batch(body: unknown, client: ApiClient = app.client) {
  return client.post('/v1/batch', body);
}

function message(users: number, groups: number): string {
  const noun = (count: number, word: string) => `${count} ${count === 1 ? word : `${word}s`}`;
  return `You successfully batch updated ${noun(users, 'user')} and ${noun(groups, 'group')}`;
}

function expectApplied(response: ApiResponse, users: number, groups: number) {
  expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { success: true, message: message(users, groups) } });
}


async function userCount(applicationId = app.id): Promise<number> {
  const result = await system.sql.query('SELECT count(*)::int AS n FROM identity.users WHERE application_id = $1', [applicationId]);
  return result.rows[0].n;
}

async function getUser(id: string, client: ApiClient = app.client) {
  const response = await client.get(userPath(id));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function getGroup(id: string, client: ApiClient = app.client) {
  const response = await client.get(groupPath(id));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function groupExists(id: string, client: ApiClient = app.client): Promise<boolean> {
  const response = await client.get(groupPath(id));
  if (response.status !== 200 && response.status !== 404) throw new Error(`GET group: ${response.status}`);
  return response.status === 200;
}

async function userExists(id: string, client: ApiClient = app.client): Promise<boolean> {
  const response = await client.get(userPath(id));
  if (response.status !== 200 && response.status !== 401) throw new Error(`GET user: ${response.status}`);
  return response.status === 200;
}

async function putUsers(client: ApiClient, userIds: readonly string[]) {
  for (const id of userIds) {
    const response = await client.put(userPath(id), { name: `Name ${id}` });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }
}

describe('POST /v1/batch answers the batch message once the batch is applied', () => {
  it('{} is a valid batch of nothing: 0 users and 0 groups', async () => {
    const before = await userCount();
    expectApplied(await batch({}), 0, 0);
    expect(await userCount()).toBe(before);
  });

  it('uses the singular for exactly one: 1 user and 0 groups, 0 users and 1 group', async () => {
    expectApplied(await batch({ users: [{ id: uniqueId('one') }] }), 1, 0);
    expectApplied(await batch({ groups: [{ id: uniqueId('one-group'), name: 'One' }] }), 0, 1);
  });

  it('uses the plural for two: 2 users and 2 groups', async () => {
    const [u1, u2] = ids('two', 2);
    const [g1, g2] = ids('two-groups', 2);
    const response = await batch({ users: [{ id: u1 }, { id: u2 }], groups: [{ id: g1, name: 'G1' }, { id: g2, name: 'G2' }] });
    expectApplied(response, 2, 2);
    expect(await userExists(u1)).toBe(true);
    expect(await userExists(u2)).toBe(true);
    expect(await groupExists(g1)).toBe(true);
    expect(await groupExists(g2)).toBe(true);
  });

  it('counts items as sent, not distinct ids', async () => {
    const [u] = ids('counted', 1);
    const [g] = ids('counted-group', 1);
    const response = await batch({ users: [{ id: u }, { id: u }], groups: [{ id: g, name: 'A' }, { id: g, name: 'B' }, { id: g, name: 'C' }] });
    expectApplied(response, 2, 3);
  });

  it('answers a body that is not a JSON object with 400 invalid_request', async () => {
    for (const body of [[], 'text', null]) expectError(await batch(body), 400, 'invalid_request');
  });
});

describe('users in a batch', () => {
  it('creates users with the given fields, and bare users with the defaults; numeric ids become strings', async () => {
    const [full, bare] = ids('create', 2);
    const response = await batch({
      users: [
        {
          id: full,
          name: 'Full Name',
          email: 'full@example.com',
          shortName: 'Full',
          profilePictureURL: 'https://example.com/full.png',
          metadata: { tier: 'gold', seats: 3, paid: true },
        },
        { id: bare },
        { id: 104 },
      ],
    });
    expectApplied(response, 3, 0);
    expect(await getUser(full)).toMatchObject({
      id: full,
      name: 'Full Name',
      email: 'full@example.com',
      shortName: 'Full',
      short_name: 'Full',
      profilePictureURL: 'https://example.com/full.png',
      status: 'active',
      metadata: { tier: 'gold', seats: 3, paid: true },
    });
    expect(await getUser(bare)).toMatchObject({ id: bare, name: null, email: null, shortName: null, profilePictureURL: null, status: 'active', metadata: {} });
    expect(await getUser('104')).toMatchObject({ id: '104' });
  });

  it('changes only the provided keys of an existing user; metadata replaces as a whole', async () => {
    const [id] = ids('partial', 1);
    await app.client.put(userPath(id), { name: 'Before', email: 'before@example.com', shortName: 'B', metadata: { a: 1, b: 2 } });
    expectApplied(await batch({ users: [{ id, shortName: 'After' }] }), 1, 0);
    expect(await getUser(id)).toMatchObject({ name: 'Before', email: 'before@example.com', shortName: 'After', metadata: { a: 1, b: 2 } });
    expectApplied(await batch({ users: [{ id, metadata: { c: false } }] }), 1, 0);
    expect(await getUser(id)).toMatchObject({ name: 'Before', email: 'before@example.com', shortName: 'After', metadata: { c: false } });
  });

  it('clears a field sent as null, and treats an empty e-mail as not provided', async () => {
    const [id] = ids('nulls', 1);
    await app.client.put(userPath(id), { name: 'Named', email: 'kept@example.com', shortName: 'N', profilePictureURL: 'https://example.com/p.png' });
    expectApplied(await batch({ users: [{ id, name: null, email: '', profilePictureURL: null }] }), 1, 0);
    expect(await getUser(id)).toMatchObject({ name: null, email: 'kept@example.com', shortName: 'N', profilePictureURL: null });
    expectApplied(await batch({ users: [{ id, email: null, short_name: null }] }), 1, 0);
    expect(await getUser(id)).toMatchObject({ name: null, email: null, shortName: null });
  });

  it('honours the snake_case keys, and the camelCase key first when both are given', async () => {
    const [snake, both] = ids('aliases', 2);
    const response = await batch({
      users: [
        { id: snake, short_name: 'snake', profile_picture_url: 'https://example.com/snake.png', first_name: 'ignored', last_name: 'ignored' },
        { id: both, shortName: 'camel', short_name: 'snake', profilePictureURL: 'https://example.com/camel.png', profile_picture_url: 'https://example.com/snake.png' },
      ],
    });
    expectApplied(response, 2, 0);
    expect(await getUser(snake)).toMatchObject({ shortName: 'snake', profilePictureURL: 'https://example.com/snake.png', first_name: null, last_name: null });
    expect(await getUser(both)).toMatchObject({ shortName: 'camel', profilePictureURL: 'https://example.com/camel.png' });
  });

  it('creates new users in the status they are given, and flips the status of existing ones', async () => {
    const [created, existing] = ids('status', 2);
    await app.client.put(userPath(existing), { name: 'Existing' });
    expectApplied(await batch({ users: [{ id: created, status: 'deleted' }, { id: existing, status: 'deleted' }] }), 2, 0);
    expect((await getUser(created)).status).toBe('deleted');
    expect(await getUser(existing)).toMatchObject({ name: 'Existing', status: 'deleted' });
  });

  it('when an id appears twice, the last item wins as a whole (earlier items are not merged in)', async () => {
    const [id] = ids('duplicate', 1);
    const response = await batch({ users: [{ id, name: 'First', email: 'first@example.com' }, { id, name: 'Second' }] });
    expectApplied(response, 2, 0);
    expect(await getUser(id)).toMatchObject({ name: 'Second', email: null });
  });
});

describe('groups in a batch', () => {
  it('updates only the provided keys of an existing group and replaces its members exactly', async () => {
    const [id] = ids('existing-group', 1);
    const [a, b, c] = ids('existing-member', 3);
    await putUsers(app.client, [a, b, c]);
    await app.client.put(groupPath(id), { name: 'Before', status: 'deleted', metadata: { keep: 'me' }, members: [a, b] });
    expect(await getGroup(id)).toMatchObject({ name: 'Before', status: 'deleted', members: [a, b] });

    expectApplied(await batch({ groups: [{ id, members: [c, b] }] }), 0, 1);
    expect(await getGroup(id)).toMatchObject({ name: 'Before', status: 'deleted', metadata: { keep: 'me' }, members: [b, c] });
    expect((await getUser(a)).groups).toEqual([]);

    expectApplied(await batch({ groups: [{ id, name: 'After', status: 'active', metadata: { new: 1 } }] }), 0, 1);
    expect(await getGroup(id)).toMatchObject({ name: 'After', status: 'active', metadata: { new: 1 }, members: [b, c] });

    expectApplied(await batch({ groups: [{ id, members: [] }] }), 0, 1);
    expect((await getGroup(id)).members).toEqual([]);
  });

  it('creates groups whose members are users created earlier in the same batch', async () => {
    const [n1, n2] = ids('same-batch-user', 2);
    const [id] = ids('same-batch-group', 1);
    const response = await batch({ users: [{ id: n1, name: 'N1' }, { id: n2 }], groups: [{ id, name: 'Fresh', members: [n2, n1, n2] }] });
    expectApplied(response, 2, 1);
    expect(await getGroup(id)).toEqual({ id, name: 'Fresh', status: 'active', members: [n2, n1], connectedToChat: false, connectedToSlack: false, metadata: {} });
    expect((await getUser(n1)).groups).toEqual([id]);
  });

  it('creates new groups in the status they are given', async () => {
    const [id] = ids('deleted-group', 1);
    expectApplied(await batch({ groups: [{ id, name: 'Born deleted', status: 'deleted' }] }), 0, 1);
    expect((await getGroup(id)).status).toBe('deleted');
  });

  it('uses groups and ignores organizations when both are present', async () => {
    const [g] = ids('preferred', 1);
    const [o1, o2] = ids('ignored-org', 2);
    const response = await batch({ groups: [{ id: g, name: 'Group' }], organizations: [{ id: o1, name: 'Org 1' }, { id: o2, name: 'Org 2' }] });
    expectApplied(response, 0, 1);
    expect(await groupExists(g)).toBe(true);
    expect(await groupExists(o1)).toBe(false);
    expect(await groupExists(o2)).toBe(false);
  });

  it('accepts organizations alone as groups', async () => {
    const [u] = ids('org-member', 1);
    const [o1, o2] = ids('org', 2);
    const response = await batch({ users: [{ id: u }], organizations: [{ id: o1, name: 'Org 1', members: [u] }, { id: o2, name: 'Org 2' }] });
    expectApplied(response, 1, 2);
    expect(await getGroup(o1)).toMatchObject({ name: 'Org 1', members: [u] });
    expect(await groupExists(o2)).toBe(true);
  });

  it('when a group id appears twice, the last item wins as a whole', async () => {
    const [u] = ids('dup-group-member', 1);
    const [id] = ids('dup-group', 1);
    const response = await batch({ users: [{ id: u }], groups: [{ id, name: 'A', members: [u], metadata: { first: true } }, { id, name: 'B' }] });
    expectApplied(response, 1, 2);
    expect(await getGroup(id)).toMatchObject({ name: 'B', members: [], metadata: {} });
  });
});

describe('a batch is validated as a whole before anything is written', () => {
  it('a new group without a name → 400 missing_field naming the item, and nothing is written', async () => {
    const [existing] = ids('named-already', 1);
    await app.client.put(groupPath(existing), { name: 'Exists' });
    const [u1, u2] = ids('not-written', 2);
    const [fresh] = ids('nameless', 1);
    const before = await userCount();

    const response = await batch({ users: [{ id: u1 }, { id: u2 }], groups: [{ id: existing, metadata: { x: 1 } }, { id: fresh, metadata: {} }] });
    expectError(response, 400, 'missing_field', 'Missing required field: groups/1/name.');
    expect(await userCount()).toBe(before);
    expect(await userExists(u1)).toBe(false);
    expect(await groupExists(fresh)).toBe(false);
    expect((await getGroup(existing)).metadata).toEqual({});

    // An empty name counts as missing; the path names the array that was used.
    const empty = await batch({ users: [{ id: u1 }], organizations: [{ id: fresh, name: '' }] });
    expectError(empty, 400, 'missing_field', 'Missing required field: organizations/0/name.');
    // The item that wins (the last) decides.
    const last = await batch({ groups: [{ id: fresh, name: 'Named first' }, { id: fresh, status: 'active' }] });
    expectError(last, 400, 'missing_field', 'Missing required field: groups/1/name.');
    expect(await userCount()).toBe(before);
    expect(await groupExists(fresh)).toBe(false);
  });

  it('schema errors name the item path, and nothing is written', async () => {
    const [valid] = ids('valid-before-error', 1);
    const before = await userCount();
    const cases: [unknown, number, string, string | RegExp][] = [
      [{ users: [{ id: valid }, { id: 'b', email: 'not-an-email' }] }, 400, 'invalid_field', 'Input type for users/1/email is not valid, expected email or null.'],
      [{ users: [{ id: valid }, { name: 'no id' }] }, 400, 'missing_field', 'Missing required field: users/1/id.'],
      [{ users: [{ id: valid, addGroups: ['g'] }] }, 400, 'unexpected_field', /^users\/0\/addGroups is not a valid field name for this request\. Expected 1 required field: id\. 10 optional fields: /],
      [{ users: [{ id: valid }], groups: [{ id: 'g', name: 'G', members: ['ok', {}] }] }, 400, 'invalid_field', 'Input type for groups/0/members/1 is not valid, expected string of 1 to 128 characters, or number.'],
      [{ users: [{ id: valid }], organizations: [{ id: 'o', name: 'O', metadata: { nested: {} } }] }, 400, 'invalid_field', /^Input type for organizations\/0\/metadata is not valid/],
      [{ users: [{ id: valid, status: 'gone' }] }, 400, 'invalid_field', /^Input type for users\/0\/status is not valid/],
      [{ users: [{ id: '' }] }, 400, 'invalid_field', /^Input type for users\/0\/id is not valid/],
      // A new entity's id must be addressable by path later.
      [{ users: [{ id: 'cord:taken' }] }, 400, 'invalid_field', 'Input type for users/0/id is not valid, expected identifier.'],
      [{ groups: [{ id: 'bad\u0001id', name: 'G' }] }, 400, 'invalid_field', 'Input type for groups/0/id is not valid, expected identifier.'],
      [{ users: [{ id: valid }], threads: [] }, 400, 'unexpected_field', 'threads is not a valid field name for this request. Expected 3 optional fields: users, groups and organizations.'],
      [{ users: { id: valid } }, 400, 'invalid_field', 'Input type for users is not valid, expected array of at most 10000 items.'],
    ];
    for (const [body, status, error, text] of cases) expectError(await batch(body), status, error, text);
    expect(await userCount()).toBe(before);
    expect(await userExists(valid)).toBe(false);
  });

  it('too many items → 400 invalid_field naming the array', async () => {
    const before = await userCount();
    const users = Array.from({ length: 10_001 }, (_, index) => ({ id: `too-many-${index}` }));
    expectError(await batch({ users }), 400, 'invalid_field', 'Input type for users is not valid, expected array of at most 10000 items.');
    const groups = Array.from({ length: 1001 }, (_, index) => ({ id: `too-many-${index}`, name: 'G' }));
    expectError(await batch({ groups }), 400, 'invalid_field', 'Input type for groups is not valid, expected array of at most 1000 items.');
    expectError(await batch({ organizations: groups }), 400, 'invalid_field', 'Input type for organizations is not valid, expected array of at most 1000 items.');
    expect(await userCount()).toBe(before);
  });

  it('an unknown member → 401 user_not_found, and nothing of the batch is written', async () => {
    const [existing] = ids('kept-group', 1);
    const [member] = ids('kept-member', 1);
    await putUsers(app.client, [member]);
    await app.client.put(groupPath(existing), { name: 'Kept', members: [member] });
    const [fresh] = ids('never-created', 1);
    const [newUser] = ids('never-user', 1);
    const before = await userCount();

    const response = await batch({
      users: [{ id: newUser }, { id: member, name: 'Renamed' }],
      groups: [
        { id: existing, name: 'Changed', members: [newUser] },
        { id: fresh, name: 'Fresh', members: [newUser, 'ghost'] },
      ],
    });
    expectError(response, 401, 'user_not_found', 'Platform user ghost not found.');
    expect(await userCount()).toBe(before);
    expect(await userExists(newUser)).toBe(false);
    expect(await groupExists(fresh)).toBe(false);
    expect(await getGroup(existing)).toMatchObject({ name: 'Kept', members: [member] });
    expect((await getUser(member)).name).toBe(`Name ${member}`);

    const two = await batch({ groups: [{ id: existing, members: ['ghost', member, 'phantom', 'ghost'] }] });
    expectError(two, 401, 'user_not_found', 'Platform users ghost and phantom not found.');
    expect((await getGroup(existing)).members).toEqual([member]);
  });
});

describe('overlapping batches', () => {
  it('all succeed as if run one after another: every entity stored once, whatever the order of the items', async () => {
    const userIds = ids('overlap-user', 30);
    const groupIds = ids('overlap-group', 5);
    const body = (order: 'forward' | 'backward', round: number) => {
      const users = userIds.map((id) => ({ id, name: `round ${round}` }));
      const groups = groupIds.map((id) => ({ id, name: `round ${round}`, members: userIds.slice(0, 10) }));
      return order === 'forward' ? { users, groups } : { users: users.reverse(), groups: groups.reverse() };
    };
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, round) => batch(body(round % 2 ? 'backward' : 'forward', round))),
    );
    for (const response of responses) expectApplied(response, 30, 5);

    const stored = await system.sql.query(
      'SELECT external_id, count(*)::int AS n FROM identity.users WHERE application_id = $1 AND external_id = ANY($2) GROUP BY external_id',
      [app.id, userIds],
    );
    expect(stored.rows.length).toBe(30);
    expect(stored.rows.every((row) => row.n === 1)).toBe(true);
    for (const id of groupIds) expect((await getGroup(id)).members).toEqual(userIds.slice(0, 10));
    // One of the rounds ran last, for every entity the same one.
    const names = new Set([...(await Promise.all(userIds.map((id) => getUser(id)))), ...(await Promise.all(groupIds.map((id) => getGroup(id))))].map((entity) => entity.name));
    expect(names.size).toBe(1);
  });
});

describe('a large batch', () => {
  it('10,000 users and 100 groups of 100 members in one call answer 200 and are all stored', { timeout: 120_000 }, async () => {
    const big = await createApplication(system, 'big batch app');
    const users = Array.from({ length: 10_000 }, (_, index) => ({
      id: `user-${String(index).padStart(5, '0')}`,
      name: `User ${index}`,
      email: `user${index}@example.com`,
      metadata: { index },
    }));
    const groups = Array.from({ length: 100 }, (_, group) => ({
      id: `group-${group}`,
      name: `Group ${group}`,
      members: Array.from({ length: 100 }, (_, member) => users[group * 100 + member].id),
    }));
    const response = await batch({ users, groups }, big.client);
    expectApplied(response, 10_000, 100);

    expect(await userCount(big.id)).toBe(10_000);
    const memberships = await system.sql.query('SELECT count(*)::int AS n FROM identity.group_members WHERE application_id = $1', [big.id]);
    expect(memberships.rows[0].n).toBe(10_000);
    expect(await getUser('user-09999', big.client)).toMatchObject({ name: 'User 9999', email: 'user9999@example.com', metadata: { index: 9999 }, groups: ['group-99'] });
    expect((await getGroup('group-42', big.client)).members).toEqual(groups[42].members);
  });
});

describe('applying the same job twice', () => {
  it('running the same job through the handler twice ends in the same database state', async () => {
    const db = createIdentityDataSource(system.env.DATABASE_URL, 2);
    await db.initialize();
    try {
      const handlers = batchJobs(db, async () => undefined);
      const [u1, u2, u3] = ids('twice', 3);
      const [g1, g2] = ids('twice-group', 2);
      await putUsers(app.client, [u3]);
      await app.client.put(groupPath(g2), { name: 'Existing', members: [u3] });
      // Recorded as the request records it; the job names the record.
      const payload: JobData<'identity-batch', 'batch.apply'> = { applicationId: app.id, requestId: randomUUID(), batchId: randomUUID() };
      await system.sql.query(`INSERT INTO identity.batches (job_id, application_id, payload) VALUES ($1, $2, $3)`, [
        payload.batchId,
        app.id,
        {
          users: [{ id: u1, name: 'One', metadata: { n: 1 } }, { id: u2, email: 'two@example.com' }, { id: u3, name: null, status: 'deleted' }],
          groups: [
            { id: g1, name: 'New', members: [u2, u1] },
            { id: g2, metadata: { updated: true }, members: [u1, u3] },
          ],
        },
      ]);
      const snapshot = async () => {
        const users = await system.sql.query(
          `SELECT internal_id, external_id, name, email, short_name, profile_picture_url, status, metadata, created_at
           FROM identity.users WHERE application_id = $1 AND external_id = ANY($2) ORDER BY external_id`,
          [app.id, [u1, u2, u3]],
        );
        const groups = await system.sql.query(
          `SELECT internal_id, external_id, name, status, metadata, created_at FROM identity.groups
           WHERE application_id = $1 AND external_id = ANY($2) ORDER BY external_id`,
          [app.id, [g1, g2]],
        );
        const members = await system.sql.query(
          `SELECT g.external_id AS group_id, u.external_id AS user_id, m.added_seq
           FROM identity.group_members m JOIN identity.groups g ON g.internal_id = m.group_id JOIN identity.users u ON u.internal_id = m.user_id
           WHERE m.application_id = $1 AND g.external_id = ANY($2) ORDER BY m.added_seq`,
          [app.id, [g1, g2]],
        );
        return { users: users.rows, groups: groups.rows, members: members.rows };
      };

      const first = await handlers['batch.apply'](payload, undefined as never, logger);
      const afterFirst = await snapshot();
      expect(first).toEqual({ message: message(3, 2) });
      expect(afterFirst.users.map((row) => [row.external_id, row.name, row.status])).toEqual([
        [u1, 'One', 'active'],
        [u2, null, 'active'],
        [u3, null, 'deleted'],
      ]);
      expect(afterFirst.members.map((row) => [row.group_id, row.user_id])).toEqual([
        [g2, u3],
        [g1, u2],
        [g1, u1],
        [g2, u1],
      ]);

      const second = await handlers['batch.apply'](payload, undefined as never, logger);
      expect(second).toEqual(first);
      expect(await snapshot()).toEqual(afterFirst);
    } finally {
      await db.destroy();
    }
  });
});

describe('the worker', () => {
  it('refuses to start when a job name of its queue has no handler, or a handler has no job', async () => {
    const connection = { redisUrl: system.env.REDIS_URL, prefix: system.env.REDIS_PREFIX, logger };
    expect(() => startWorker('identity-batch', {} as JobHandlers<'identity-batch'>, connection)).toThrow(/missing: batch\.apply/);
    const extra = { 'batch.apply': async () => undefined, 'batch.undo': async () => undefined } as JobHandlers<'identity-batch'>;
    expect(() => startWorker('identity-batch', extra, connection)).toThrow(/unknown: batch\.undo/);
    // Control: with exactly its handlers it starts (on its own prefix, so it takes no job of this system).
    const db = createIdentityDataSource(system.env.DATABASE_URL, 1);
    const controlPrefix = `${connection.prefix}-control`;
    const worker = startWorker('identity-batch', batchJobs(db, async () => undefined), { ...connection, prefix: controlPrefix });
    await worker.waitUntilReady();
    await worker.close();
    await deleteRedisPrefix(system.env.REDIS_URL, controlPrefix);
  });
});

describe('when the wait runs out: 202 and GET /v1/batch/<jobID>', () => {
  let quick: TestSystem;
  let quickApp: TestApplication;
  let other: TestApplication;

  beforeAll(async () => {
    quick = await startSystem({ env: { BATCH_WAIT_MS: '0' } });
    quickApp = await createApplication(quick, 'quick batch app');
    other = await createApplication(quick, 'other batch app');
  });
  afterAll(() => quick?.stop());

  async function statusUntil(client: ApiClient, jobID: string, final: 'completed' | 'failed') {
    const seen = new Set<string>();
    const body = await pollUntil(`job ${jobID} ${final}`, 20_000, async () => {
      const response = await client.get(`/v1/batch/${jobID}`);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      seen.add(response.body.status);
      return response.body.status === final ? response.body : undefined;
    });
    for (const status of seen) expect(['waiting', 'active', 'completed', 'failed']).toContain(status);
    return body;
  }

  it('answers 202 with a UUID jobID, and the status reaches completed with the batch message', async () => {
    const [u1, u2] = ids('accepted', 2);
    const [g] = ids('accepted-group', 1);
    const response = await batch({ users: [{ id: u1, name: 'Later' }, { id: u2 }], groups: [{ id: g, name: 'Later', members: [u1, u2] }] }, quickApp.client);
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ success: true, message: 'Batch accepted.', jobID: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/) });

    expect(await statusUntil(quickApp.client, response.body.jobID, 'completed')).toEqual({ status: 'completed', message: message(2, 1) });
    expect(await getUser(u1, quickApp.client)).toMatchObject({ name: 'Later', groups: [g] });
    expect((await getGroup(g, quickApp.client)).members).toEqual([u1, u2]);
  });

  it('reports failed with the error after a 202 for a batch with unknown members, and nothing is written', async () => {
    const [u] = ids('failed-batch', 1);
    const [g] = ids('failed-group', 1);
    const response = await batch({ users: [{ id: u }], groups: [{ id: g, name: 'Never', members: [u, 'nobody'] }] }, quickApp.client);
    expect(response.status).toBe(202);
    expect(await statusUntil(quickApp.client, response.body.jobID, 'failed')).toEqual({
      status: 'failed',
      error: { error: 'user_not_found', message: 'Platform user nobody not found.' },
    });
    expect(await userExists(u, quickApp.client)).toBe(false);
    expect(await groupExists(g, quickApp.client)).toBe(false);
  });

  it("another application's job, an unknown job and a jobID that is not a UUID are 404 not_found", async () => {
    const response = await batch({ users: [{ id: uniqueId('mine') }] }, quickApp.client);
    expect(response.status).toBe(202);
    const { jobID } = response.body;
    await statusUntil(quickApp.client, jobID, 'completed');

    expectError(await other.client.get(`/v1/batch/${jobID}`), 404, 'not_found');
    expectError(await quickApp.client.get(`/v1/batch/${randomUUID()}`), 404, 'not_found');
    expectError(await quickApp.client.get('/v1/batch/not-a-uuid'), 404, 'not_found');
    // Control: the owner reads it.
    expect((await quickApp.client.get(`/v1/batch/${jobID}`)).status).toBe(200);
  });

  it('validation still happens before the 202: an invalid batch is answered 400 at once', async () => {
    const response = await batch({ groups: [{ id: uniqueId('no-name') }] }, quickApp.client);
    expectError(response, 400, 'missing_field', 'Missing required field: groups/0/name.');
  });
});

describe('Redis unreachable', () => {
  let server: Server;
  let url: string;
  let service: Awaited<ReturnType<typeof createIdentityService>>;

  /** A port nothing listens on: bound once, then released. */
  async function closedPort(): Promise<number> {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return port;
  }

  beforeAll(async () => {
    service = await createIdentityService(loadIdentityConfig({ ...system.env, REDIS_URL: `redis://127.0.0.1:${await closedPort()}` }), logger);
    server = http.createServer(service.app as Express);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server?.close(() => resolve());
      server?.closeAllConnections();
    });
    await service?.close();
  });

  /** Calls the identity service directly, as the gateway does; a hang fails after 10 s. */
  async function direct(method: string, path: string, body?: unknown) {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        [INTERNAL_HEADERS.internalToken]: system.env.INTERNAL_TOKEN,
        [INTERNAL_HEADERS.applicationId]: app.id,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as { error: string; message: string } };
  }

  it('POST /v1/batch answers 503 service_unavailable with Retry-After, and nothing is written', async () => {
    const [u] = ids('no-redis', 1);
    const [g] = ids('no-redis-group', 1);
    const before = await userCount();
    const response = await direct('POST', '/v1/batch', { users: [{ id: u }], groups: [{ id: g, name: 'Nope', members: [u] }] });
    expect(response.status).toBe(503);
    expect(response.body).toEqual({ error: 'service_unavailable', message: expect.any(String) });
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await userCount()).toBe(before);
    expect(await userExists(u)).toBe(false);
    expect(await groupExists(g)).toBe(false);
  });

  it('GET /v1/batch/<jobID> needs no Redis: it answers from the batch\'s record, and an unknown job is 404', async () => {
    const applied = await batch({ users: [{ id: uniqueId('recorded') }] });
    expectApplied(applied, 1, 0);
    const { rows } = await system.sql.query(`SELECT job_id FROM identity.batches WHERE application_id = $1 ORDER BY created_at DESC LIMIT 1`, [app.id]);
    const response = await direct('GET', `/v1/batch/${rows[0].job_id}`);
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { status: 'completed', message: message(1, 0) } });
    const unknown = await direct('GET', `/v1/batch/${randomUUID()}`);
    expect({ status: unknown.status, error: unknown.body.error }).toEqual({ status: 404, error: 'not_found' });
  });

  it('validation errors are still answered: they need no Redis', async () => {
    const response = await direct('POST', '/v1/batch', { users: [{ id: 'x', email: 'bad' }] });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_field');
  });
});
