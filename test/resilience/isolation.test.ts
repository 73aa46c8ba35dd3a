/**
 * Tenant isolation matrix (issue #7 point 2). Application A holds one of everything, marked with a
 * string unique to it. For every public route of the route table (so a new route is covered
 * without touching this file), application B uses A's IDs, and the Idempotency-Keys A wrote with:
 * reads get not-found or B's own empty data, writes touch only B's data (never A's stored answer),
 * and no response carries anything of A's. A second customer
 * cannot see, change or delete the first customer's applications. Deleting an application that
 * wrote under all of A's IDs leaves A intact and complete. Needs the build (the customer CLI).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ROUTES, type RouteDef } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient, asCustomer, createApplication, request, type ApiResponse, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { clientToken, customerToken, serverToken } from '../support/tokens.js';

const run = promisify(execFile);
const CUSTOMER_CLI = fileURLToPath(new URL('../../services/identity/dist/cli/customer.js', import.meta.url));
const ALL_QUEUES = ['identity-batch', 'identity-import', 'conversation-purge', 'notification-purge', 'webhooks-purge', 'webhooks-delivery'] as const;

/** In every name, text and metadata of A, and nowhere else. */
const MARK = `amark${randomBytes(6).toString('hex')}`;
const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];
/** The Idempotency-Key A seeded a route's write with (one per route: a key names one request). */
const keyOfA = (routeId: string) => ({ 'Idempotency-Key': `${routeId} ${MARK}` });

let system: TestSystem;
/** Where A's (and B's) registered webhooks deliver; it answers 200. */
let receiver: WebhookReceiver;
let appA: TestApplication;
/** Reads only, so it holds no data at all whatever ran before. */
let readerB: TestApplication;
let writerB: TestApplication;
/** A's IDs by path-parameter name; a route with a parameter missing here fails the matrix. */
let idsOfA: Record<string, string>;
/** A's view through every read route, and its rows in the database, right after seeding. */
let baseline: { view: Record<string, unknown>; rows: Record<string, string> };

type Body = { json: unknown } | { form: () => FormData };

/** A minimal valid body for every route that takes one, naming A's IDs wherever a body names IDs. */
const BODIES: Record<string, (as: TestApplication) => Body | Promise<Body>> = {
  'auth.authorize': async (as) => ({ json: { signed_app_token: await serverToken(appA.id, as.secret) } }),
  'groups.upsert': () => ({ json: { name: 'B group', members: ['ann', 'bob'] } }),
  'groups.updateMembers': () => ({ json: { add: ['ann', 'bob'] } }),
  'organizations.create': () => ({ json: { id: 'org-a', name: 'B org' } }),
  'organizations.upsert': () => ({ json: { name: 'B org', members: ['ann'] } }),
  'organizations.updateMembers': () => ({ json: { add: ['ann', 'bob'] } }),
  'users.create': () => ({ json: { id: 'ann', name: 'B Ann' } }),
  'users.upsert': () => ({ json: { name: 'B Ann', addGroups: ['team'], removeGroups: ['org-a'] } }),
  'users.delete': () => ({ json: { permanently_delete: true } }),
  'users.updatePreferences': () => ({ json: { key: 'notification_channels', value: { sendViaEmail: true, sendViaSlack: true } } }),
  'batch.submit': () => ({
    json: { users: [{ id: 'ann', name: 'B batch Ann' }], groups: [{ id: 'team', name: 'B batch team', members: ['ann', 'bob'] }] },
  }),
  'applications.create': () => ({ json: { name: 'B app' } }),
  'applications.update': () => ({ json: { name: 'B took it' } }),
  'applications.delete': () => ({ json: { secret: appA.secret } }),
  'projects.create': () => ({ json: { name: 'B app' } }),
  'projects.update': () => ({ json: { name: 'B took it' } }),
  'projects.delete': () => ({ json: { secret: appA.secret } }),
  'applications.webhooks.create': () => ({ json: { url: `${receiver.url}/b`, events: ['thread-message-added'] } }),
  'projects.webhooks.create': () => ({ json: { url: `${receiver.url}/b`, events: ['thread-message-added'] } }),
  'threads.create': () => ({ json: { id: 'thread-a', groupID: 'team', location: { page: 'b' }, url: 'https://b.example/t', name: 'B thread' } }),
  'threads.update': () => ({
    json: { name: 'B took it', resolved: true, addSubscribers: ['ann'], seenByUsers: [{ userID: 'bob', seen: false }] },
  }),
  'messages.create': () => ({
    json: {
      id: 'message-a',
      authorID: 'ann',
      content: paragraph('B writes'),
      addReactions: [{ reaction: 'B', userID: 'ann' }],
      createThread: { groupID: 'team', location: { page: 'b' }, url: 'https://b.example/t', name: 'B thread' },
    },
  }),
  'messages.update': () => ({
    json: {
      content: paragraph('B took it'),
      addReactions: [{ reaction: 'B', userID: 'ann' }],
      removeReactions: [{ reaction: 'A', userID: 'bob' }],
      removeAttachments: [{ type: 'file', id: idsOfA.fileID }],
    },
  }),
  'messages.append': () => ({ json: { text: 'B appends' } }),
  'presence.update': () => ({ json: { location: { page: MARK }, groupID: 'team', durable: true } }),
  'files.upload': () => ({ form: () => uploadForm('ann', 'B file') }),
  'imports.create': () => ({ form: () => dumpForm() }),
  // A reply's address is its own credential, the same for every caller; A's activity caused no mail.
  'mail.inbound': () => ({ form: () => inboundForm() }),
  'notifications.create': () => ({
    json: { actor_id: 'ann', recipient_id: 'bob', template: 'B {{actor}}', url: 'https://b.example/n', type: 'url' },
  }),
};

/** The query a read route needs to show anything (the location A's presence is at, the users it names). */
const QUERIES: Record<string, string> = {
  'presence.get': `?location=${encodeURIComponent(JSON.stringify({ page: MARK }))}`,
  'client.presence': `?location=${encodeURIComponent(JSON.stringify({ page: MARK }))}`,
  'client.users': `?users=${encodeURIComponent(JSON.stringify(['ann', 'bob']))}`,
};

/** A customer dump with nothing in it, as the `dump` part of a form. */
const EMPTY_DUMP = 'BEGIN;\n\nCOMMIT;\n';
function dumpForm(): FormData {
  const form = new FormData();
  form.set('dump', new Blob([EMPTY_DUMP], { type: 'text/plain' }), 'dump.sql');
  return form;
}

function uploadForm(ownerID: string, text: string): FormData {
  const form = new FormData();
  form.set('ownerID', ownerID);
  form.set('file', new Blob([text], { type: 'text/plain' }), 'note.txt');
  return form;
}

/** A reply by mail to an address that names no mail. */
function inboundForm(): FormData {
  const form = new FormData();
  form.set('to', `chat-${'A'.repeat(32)}@mail.example.test`);
  form.set('from', 'bob@example.test');
  form.set('text', `B replies ${MARK}`);
  return form;
}

const takesBody = (route: RouteDef) => Boolean(route.body) || route.bodyType !== undefined;
const paramsOf = (route: RouteDef) => [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]);
const appRoutes = ROUTES.filter((route) => route.auth !== 'customer');
const customerRoutes = ROUTES.filter((route) => route.auth === 'customer');
const readRoutes = appRoutes.filter((route) => route.method === 'GET');
/**
 * Creations and updates first, then deletions in reverse table order (a message before its thread,
 * a thread before its group), so that B deletes its own copies under A's IDs one by one.
 */
const writeRoutes = [
  ...appRoutes.filter((route) => route.method !== 'GET' && route.method !== 'DELETE'),
  ...appRoutes.filter((route) => route.method === 'DELETE').reverse(),
];
const label = (route: RouteDef) => `${route.method} ${route.path}`;

/** `route` called as `as` (or as a customer token), path parameters filled with `ids`. */
async function call(
  route: RouteDef,
  as: { token: string; app?: TestApplication },
  ids: Record<string, string>,
): Promise<ApiResponse & { sent: string }> {
  const named = (name: string) => {
    if (!(name in ids)) throw new Error(`no ID of A for :${name} (${label(route)}): add it to idsOfA`);
    return ids[name];
  };
  const path = route.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(named(name))) + (QUERIES[route.id] ?? '');
  let body: Body | undefined;
  if (takesBody(route)) {
    const build = BODIES[route.id];
    if (!build) throw new Error(`no body for ${route.id} (${label(route)}): add it to BODIES`);
    body = await build(as.app ?? appA);
  }
  // Client routes read as a viewer: the application's user `ann`, in the application's own secret.
  const caller = as.app ?? appA;
  const token = route.auth === 'client' ? await clientToken(caller.id, caller.secret, { user_id: 'ann' }) : as.token;
  // Internal headers naming A: the gateway must drop them, whatever the route.
  const headers = {
    authorization: `Bearer ${token}`,
    'x-collab-viewer': Buffer.from(JSON.stringify({ userId: 'ann', groupId: null, groupIds: ['team'] })).toString('base64url'),
    'x-collab-application-id': appA.id,
    'x-collab-customer-id': system.customer.id,
    // A's key: another application's request with it runs as its own, never answers A's answer.
    ...(route.idempotent ? keyOfA(route.id) : {}),
  };
  const sent = `${paramsOf(route).map(named).join(' ')} ${body && 'json' in body ? JSON.stringify(body.json) : ''}`;
  if (body && 'form' in body) {
    const response = await fetch(`${system.url}${path}`, { method: route.method, headers, body: body.form() });
    return { status: response.status, headers: response.headers, body: await response.json().catch(() => undefined), sent };
  }
  const response = await request(system.url, route.method, path, { headers, body: body?.json });
  return { ...response, sent };
}

const appCaller = async (application: TestApplication) => ({ token: await serverToken(application.id, application.secret), app: application });

/** Everything of A's that must never reach another tenant; an ID the request itself sent is merely echoed. */
function leaksOfA(response: ApiResponse & { sent: string }): string[] {
  const text = JSON.stringify(response.body ?? '');
  const secrets = [MARK, appA.id, appA.secret, idsOfA.fileID, idsOfA.notificationID, idsOfA.jobID];
  return secrets.filter((secret) => text.includes(secret) && !response.sent.includes(secret));
}

/** A's Idempotency-Key, sent by another tenant, is that tenant's own: never replayed, reused or in use. */
function expectOwnKey(route: RouteDef, response: ApiResponse) {
  if (!route.idempotent) return;
  expect(response.headers.get('idempotent-replayed'), label(route)).toBeNull();
  expect(String(response.body?.error), label(route)).not.toMatch(/^idempotency_key/);
}

/** An answer with nothing in it: no non-empty array anywhere. */
function isEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (value && typeof value === 'object') return Object.values(value).every(isEmpty);
  return true;
}

/** A's answers to every read route with its own IDs; signed links differ per call, so they are cut. */
async function viewOf(application: TestApplication): Promise<Record<string, unknown>> {
  const view: Record<string, unknown> = {};
  for (const route of readRoutes) {
    const response = await call(route, await appCaller(application), idsOfA);
    const body = JSON.stringify(response.body ?? null).replace(/\?expires=\d+&signature=[\w-]+/g, '?signed');
    view[label(route)] = { status: response.status, body: JSON.parse(body) };
  }
  // The file's bytes, through the signed link A's message carries.
  const message = await application.client.get('/v1/threads/thread-a/messages/message-a');
  const links: string[] = (message.body?.attachments ?? []).map((attachment: { url: string }) => attachment.url);
  view.files = await Promise.all(links.map(async (url) => (await fetch(url)).text()));
  return view;
}

/** A digest of every row the database holds for an application, table by table. */
async function rowsOf(applicationId: string): Promise<Record<string, string>> {
  const { rows: tables } = await system.sql.query<{ schema: string; name: string; column: string }>(
    `SELECT table_schema AS schema, table_name AS name, column_name AS column FROM information_schema.columns
      WHERE table_schema IN ('identity', 'conversation', 'notification', 'webhooks', 'mail')
        AND (column_name = 'application_id' OR (table_schema, table_name, column_name) = ('identity', 'applications', 'id'))
      ORDER BY 1, 2`,
  );
  const digests: Record<string, string> = {};
  for (const { schema, name, column } of tables) {
    const { rows } = await system.sql.query<{ rows: number; digest: string | null }>(
      `SELECT count(*)::int AS rows, md5(string_agg(t::text, ',' ORDER BY t::text)) AS digest FROM "${schema}"."${name}" t WHERE "${column}" = $1`,
      [applicationId],
    );
    digests[`${schema}.${name}`] = `${rows[0].rows}:${rows[0].digest}`;
  }
  return digests;
}

async function expectAIntact() {
  await waitForQueuesIdle(system, [...ALL_QUEUES]);
  expect(await rowsOf(appA.id)).toEqual(baseline.rows);
  expect(await viewOf(appA)).toEqual(baseline.view);
}

/** Users and a group of B's own under A's IDs, so that B's writes reach B's data instead of failing. */
async function seedLookalikes(application: TestApplication) {
  for (const id of ['ann', 'bob']) expect((await application.client.put(`/v1/users/${id}`, { name: `B ${id}` })).status).toBe(200);
  expect((await application.client.put('/v1/groups/team', { name: 'B team', members: ['ann', 'bob'] })).status).toBe(200);
}

async function seedA(): Promise<Record<string, string>> {
  const ok = (response: ApiResponse, what: string) => {
    if (response.status >= 300) throw new Error(`seeding ${what} failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  const { client } = appA;
  const metadata = { mark: MARK };
  const webhook = ok(await client.post(`/v1/applications/${appA.id}/webhooks`, { url: `${receiver.url}/a/${MARK}`, events: ['thread-message-added'] }), 'webhook');
  ok(await client.put('/v1/users/ann', { name: `Ann ${MARK}`, email: `ann.${MARK}@example.com`, metadata }), 'ann');
  ok(await client.put('/v1/users/bob', { name: `Bob ${MARK}`, metadata }), 'bob');
  ok(await client.put('/v1/users/ann/preferences', { key: 'notification_channels', value: { sendViaEmail: false, sendViaSlack: false } }), 'preferences');
  ok(await client.put('/v1/groups/team', { name: `Team ${MARK}`, members: ['ann', 'bob'], metadata }), 'group');
  ok(await client.post('/v1/organizations', { id: 'org-a', name: `Org ${MARK}`, members: ['ann'] }), 'organization');
  ok(await client.put('/v1/users/ann/presence', { location: { page: MARK }, groupID: 'team', durable: true }), 'presence');
  const uploaded = await fetch(`${system.url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await serverToken(appA.id, appA.secret)}`, ...keyOfA('files.upload') },
    body: uploadForm('ann', `file of ${MARK}`),
  });
  const fileID: string = ok({ status: uploaded.status, headers: uploaded.headers, body: await uploaded.json() }, 'file').fileID;
  ok(
    await client.post('/v1/threads/thread-a/messages', {
      id: 'message-a',
      authorID: 'ann',
      content: paragraph(`message of ${MARK}`),
      metadata,
      addReactions: [{ reaction: 'A', userID: 'bob' }],
      addAttachments: [{ type: 'file', id: fileID }],
      createThread: { groupID: 'team', location: { page: MARK }, url: `https://a.example/${MARK}`, name: `Thread ${MARK}` },
    }, keyOfA('messages.create')),
    'message',
  );
  const notification = ok(
    await client.post('/v1/notifications', {
      actor_id: 'bob',
      recipient_id: 'ann',
      template: `{{actor}} ${MARK}`,
      url: 'https://a.example/n',
      type: 'url',
    }, keyOfA('notifications.create')),
    'notification',
  );
  // BATCH_WAIT_MS=0: the batch answers 202 with a job ID at once.
  const batch = ok(await client.post('/v1/batch', { users: [{ id: 'carl', name: `Carl ${MARK}` }] }, keyOfA('batch.submit')), 'batch');
  // An import of A's customer (an empty dump: it names no application).
  const imported = await fetch(`${system.url}/v1/customer/imports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await customerToken(system.customer.id, system.customer.secret)}` },
    body: dumpForm(),
  });
  const importOfA = ok({ status: imported.status, body: await imported.json() } as ApiResponse, 'import');
  // The message's event is relayed and delivered in the background: wait for its delivery.
  let deliveryID: string | undefined;
  for (const deadline = Date.now() + 20_000; !deliveryID; ) {
    const log = ok(await client.get('/v1/webhooks/deliveries?filter=' + encodeURIComponent(JSON.stringify({ status: 'succeeded' }))), 'deliveries');
    deliveryID = log.deliveries[0]?.id;
    if (Date.now() > deadline) throw new Error('seeding: the message event was not delivered');
    if (!deliveryID) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await waitForQueuesIdle(system, [...ALL_QUEUES]);
  return {
    webhookID: webhook.webhookID,
    deliveryID,
    userID: 'ann',
    groupID: 'team',
    orgID: 'org-a',
    threadID: 'thread-a',
    messageID: 'message-a',
    fileID,
    notificationID: notification.notificationID,
    jobID: batch.jobID,
    applicationID: appA.id,
    importID: importOfA.importID,
    // A mail's link is its own credential, the same for every caller; A's activity caused no mail.
    linkID: 'no-mail-of-a',
  };
}

beforeAll(async () => {
  receiver = await new WebhookReceiver(() => undefined).start();
  system = await startSystem({ env: { BATCH_WAIT_MS: '0', OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
  // With a key, which another customer then sends with its own creation.
  const created = await asCustomer(system).post('/v1/applications', { name: `A ${MARK}` }, keyOfA('applications.create'));
  const { applicationID, secret } = created.body as { applicationID: string; secret: string };
  appA = { id: applicationID, secret, client: new ApiClient(system, () => serverToken(applicationID, secret)) };
  readerB = await createApplication(system, 'reader B');
  writerB = await createApplication(system, 'writer B');
  idsOfA = await seedA();
  await seedLookalikes(writerB);
  baseline = { view: await viewOf(appA), rows: await rowsOf(appA.id) };
});
afterAll(async () => {
  await system?.stop();
  await receiver?.stop();
});

describe('the matrix covers the whole route table', () => {
  it('knows an ID of A for every path parameter, and a body for every route that takes one', () => {
    const unknownParams = ROUTES.flatMap((route) =>
      paramsOf(route)
        .filter((name) => !(name in idsOfA))
        .map((name) => `${label(route)} :${name}`),
    );
    const missingBodies = ROUTES.filter((route) => takesBody(route) && !BODIES[route.id]).map(label);
    const staleBodies = Object.keys(BODIES).filter((id) => !ROUTES.some((route) => route.id === id && takesBody(route)));
    expect({ unknownParams, missingBodies, staleBodies }).toEqual({ unknownParams: [], missingBodies: [], staleBodies: [] });
  });

  it("A's baseline is complete: every read route answers A with A's data", () => {
    for (const route of readRoutes.filter((candidate) => candidate.auth === 'app')) {
      const { status, body } = baseline.view[label(route)] as { status: number; body: unknown };
      expect(status, label(route)).toBe(200);
      // A batch job's status, a user's preferences (two booleans) and a delivery's attempts (statuses and times) name
      // nothing of A's; everything else shows A's marked data.
      if (route.id === 'users.getPreferences') expect(body, label(route)).toEqual({ notification_channels: { sendViaEmail: false, sendViaSlack: false } });
      else if (route.id === 'webhooks.deliveries.attempts') expect(body, label(route)).toMatchObject({ attempts: [{ attempt: 1 }] });
      else if (route.id !== 'batch.get') expect(JSON.stringify(body), label(route)).toContain(MARK);
    }
    expect(baseline.view.files).toEqual([`file of ${MARK}`]);
  });
});

describe("application B with A's IDs", () => {
  it.each(readRoutes)('$method $path: not found, or B\'s own empty data', async (route) => {
    const response = await call(route, await appCaller(readerB), idsOfA);
    expect(leaksOfA(response), JSON.stringify(response.body)).toEqual([]);
    if (route.id === 'auth.verify') expect(response.body.application_id).toBe(readerB.id);
    else if (response.status < 300) expect(isEmpty(response.body), JSON.stringify(response.body)).toBe(true);
    // B has no user `ann`: its client token names no viewer.
    else if (route.auth === 'client') expectError(response, 403, 'invalid_session');
    // Not found, under the reference's 401 `…_not_found` codes or a 404.
    else expect(`${response.status} ${response.body?.error}`).toMatch(/^40[14] \w+_not_found$|^404 not_found$/);
  });

  it.each(writeRoutes)('$method $path: leaves A\'s data as it was', async (route) => {
    const response = await call(route, await appCaller(writerB), idsOfA);
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(500);
    expect(leaksOfA(response), JSON.stringify(response.body)).toEqual([]);
    expectOwnKey(route, response);
    await expectAIntact();
  });

  it("B cannot attach A's file to its own message", async () => {
    const borrower = await createApplication(system, 'borrower B');
    await seedLookalikes(borrower);
    const response = await borrower.client.post('/v1/threads/thread-b/messages', {
      authorID: 'ann',
      content: paragraph('with a borrowed file'),
      addAttachments: [{ type: 'file', id: idsOfA.fileID }],
      createThread: { groupID: 'team', location: { page: 'b' }, url: 'https://b.example/b', name: 'B thread' },
    });
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 404, error: 'file_not_found' });
    await expectAIntact();
  });

  it("after B's writes, B's reads still show nothing of A's", async () => {
    for (const route of readRoutes) {
      const response = await call(route, await appCaller(writerB), idsOfA);
      expect(leaksOfA(response), `${label(route)}: ${JSON.stringify(response.body)}`).toEqual([]);
    }
  });
});

describe("another customer with A's application ID", () => {
  let stranger: { id: string; secret: string };
  beforeAll(async () => {
    // Created the way an operator creates one.
    const { stdout } = await run(process.execPath, [CUSTOMER_CLI, 'create'], { env: { ...process.env, ...system.env } });
    const value = (key: string) => new RegExp(`^${key}=(\\S+)$`, 'm').exec(stdout)?.[1] ?? '';
    stranger = { id: value('CUSTOMER_ID'), secret: value('CUSTOMER_SECRET') };
  });

  it.each(customerRoutes)('$method $path: not found, or only its own applications', async (route) => {
    const response = await call(route, { token: await customerToken(stranger.id, stranger.secret) }, idsOfA);
    expect(leaksOfA(response), JSON.stringify(response.body)).toEqual([]);
    for (const theirs of [readerB, writerB]) expect(JSON.stringify(response.body)).not.toContain(theirs.id);
    expectOwnKey(route, response);
    // Another customer's application is unknown to this one: 401 application_not_found.
    if (paramsOf(route).includes('applicationID'))
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: 401, error: 'application_not_found' });
    // So is its import.
    else if (paramsOf(route).includes('importID')) expect({ status: response.status, error: response.body?.error }).toEqual({ status: 404, error: 'not_found' });
    // Its own import is accepted.
    else expect(response.status, JSON.stringify(response.body)).toBe(route.id === 'imports.create' ? 202 : 200);
    await expectAIntact();
  });
});

describe('deleting another application', () => {
  it("that wrote under all of A's IDs leaves A intact and complete", async () => {
    const doomed = await createApplication(system, 'doomed B');
    await seedLookalikes(doomed);
    for (const route of writeRoutes.filter((candidate) => candidate.method !== 'DELETE'))
      expect((await call(route, await appCaller(doomed), idsOfA)).status, label(route)).toBeLessThan(500);
    await waitForQueuesIdle(system, [...ALL_QUEUES]);
    // It did write: users, groups, threads, messages, notifications of its own.
    const written = await rowsOf(doomed.id);
    for (const table of ['identity.users', 'identity.groups', 'conversation.threads', 'conversation.messages', 'notification.notifications'])
      expect(written[table], table).not.toMatch(/^0:/);

    const deleted = await request(system.url, 'DELETE', `/v1/applications/${doomed.id}`, {
      token: await customerToken(system.customer.id, system.customer.secret),
      body: { secret: doomed.secret },
    });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    await expectAIntact();
    // Nothing of B is left but the record of its deletion, kept so that late work for B is refused.
    const left = Object.entries(await rowsOf(doomed.id)).filter(([table, digest]) => !digest.startsWith('0:') && !table.endsWith('.application_purges'));
    expect(left).toEqual([]);
  });
});
