/**
 * Bad input never breaks the API (issue #7, point 3), property-based: every route of the shared
 * route table, so a new route is fuzzed without touching this file, gets random and mutated JSON
 * bodies, random query strings and random path parameters through the real gateway, every
 * paged route gets forged pagination tokens (random ones, and its real tokens mutated), and every
 * route that takes an `Idempotency-Key` gets random keys (a valid one answers its repeat the same). Whatever
 * arrives, the answer is never a 5xx, comes within 10 s, carries an `X-Request-Id`, every 4xx is
 * exactly the error envelope (`{error, message}`, a catalog code and a non-empty text),
 * and a rejected write leaves the database exactly as it was (a snapshot after each write request
 * is compared with the one before it).
 *
 * fast-check picks a random seed on each run; a failure prints its `seed` and `path`, and
 * `FUZZ_SEED=<seed> FUZZ_PATH=<path> npx vitest run test/resilience/fuzz-routes.test.ts` replays it.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import {
  buildOpenApiDocument,
  ROUTES,
  type JsonSchema,
  type RouteDef,
} from '@collab/shared';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApplication } from '../support/client.js';
import { snapshotDatabase, type DatabaseSnapshot } from '../support/db-snapshot.js';
import { expectEnvelope, forgedPageTokens, nastyString, parseJson, startFuzzSystem, type Answer, type RouteTokens } from '../support/fuzz.js';
import { nextPageToken, pagedRoutes } from '../support/pages.js';
import { waitForBackgroundWork } from '../support/queues.js';
import type { TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;
let tokens: RouteTokens;

// ---------------------------------------------------------------------------------------------
// HTTP with a deadline: a request that gets no complete answer within 10 s fails the property.

const ANSWER_DEADLINE_MS = 10_000;
/**
 * Keep-alive, as clients connect, so that a connection left unusable by one request shows in the
 * next; idle connections are dropped before the servers' 5 s keep-alive timeout could race a reuse.
 */
const agent = new http.Agent({ keepAlive: true, timeout: 2000 });

/** Any method, a path sent byte for byte, any body (fetch would normalise the path and refuse GET bodies). */
function send(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; json?: unknown; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.json !== undefined ? JSON.stringify(options.json) : options.body;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  // Node sends a DELETE's body without a length unless told, which no server can frame.
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path.startsWith('/') ? '' : '/'}`, { method, path, headers, agent, timeout: ANSWER_DEADLINE_MS });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${ANSWER_DEADLINE_MS} ms: ${method} ${path.slice(0, 200)}`)));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parseJson(text) });
      });
    });
    req.end(body);
  });
}

// ---------------------------------------------------------------------------------------------
// Seed data, so that valid parts of a request reach the checks behind them (existence, membership).

const SEED = { user: 'fuzz-user', otherUser: 'fuzz-user-2', group: 'fuzz-group', thread: 'fuzz-thread', message: 'fuzz-message' };
let notificationId = '';
let seedGeneration = 0;

/**
 * Puts the seed data back (a fuzzed request that succeeded may have changed or deleted it). A lost
 * thread or message comes back under new ids: its old ones may now name something else.
 */
async function ensureSeeds(): Promise<void> {
  const call = async (method: string, path: string, body: unknown) => {
    const answer = await send(system.url, method, path, { token: tokens.app, json: body });
    if (answer.status !== 200) throw new Error(`seeding ${method} ${path}: ${answer.status} ${answer.text}`);
    return answer.body as Record<string, string>;
  };
  for (const id of [SEED.user, SEED.otherUser])
    await call('PUT', `/v1/users/${id}`, { name: id, email: `${id}@example.com`, status: 'active' });
  await call('PUT', `/v1/groups/${SEED.group}`, { name: SEED.group, status: 'active', members: [SEED.user, SEED.otherUser] });
  const message = await send(system.url, 'GET', `/v1/threads/${SEED.thread}/messages/${SEED.message}`, { token: tokens.app });
  if (message.status !== 200) {
    seedGeneration += 1;
    SEED.thread = `fuzz-thread-${seedGeneration}`;
    SEED.message = `fuzz-message-${seedGeneration}`;
    await call('POST', `/v1/threads/${SEED.thread}/messages`, {
      id: SEED.message,
      authorID: SEED.user,
      content: [{ type: 'p', children: [{ text: 'seed' }] }],
      createThread: { groupID: SEED.group, location: { page: 'fuzz' }, url: 'https://example.com/fuzz', name: 'Fuzz' },
    });
  }
  const notification = await call('POST', '/v1/notifications', {
    actor_id: SEED.user,
    recipient_id: SEED.otherUser,
    template: '{{actor}} says hi',
    url: 'https://example.com/n',
    type: 'url',
  });
  notificationId = notification.notificationID;
}

/** A path parameter naming seed data, by the parameter's name. */
function seedParam(name: string): string {
  const byName: Record<string, string> = {
    userID: SEED.user,
    groupID: SEED.group,
    orgID: SEED.group,
    threadID: SEED.thread,
    messageID: SEED.message,
    applicationID: app.id,
    notificationID: notificationId,
  };
  return byName[name] ?? randomUUID();
}

/** Body fields that name seed entities, so generated bodies are often valid enough to go deep. */
const SEED_FIELDS: Record<string, () => string> = {
  authorID: () => SEED.user,
  userID: () => SEED.user,
  actor_id: () => SEED.user,
  actorID: () => SEED.user,
  recipient_id: () => SEED.otherUser,
  recipientID: () => SEED.otherUser,
  members: () => SEED.otherUser,
  add: () => SEED.otherUser,
  remove: () => SEED.user,
  addSubscribers: () => SEED.user,
  removeSubscribers: () => SEED.otherUser,
  typing: () => SEED.user,
  groupID: () => SEED.group,
  organizationID: () => SEED.group,
  addGroups: () => SEED.group,
  removeGroups: () => SEED.group,
};

// ---------------------------------------------------------------------------------------------
// Nasty values. Big ones print as a short description in fast-check's counterexamples.

/** A string of `count` repetitions of `unit`, printed short, serialized in full. */
class Huge {
  constructor(
    readonly unit: string,
    readonly count: number,
  ) {}
  toJSON(): string {
    return this.unit.repeat(this.count);
  }
  [fc.toStringMethod](): string {
    return `Huge(${JSON.stringify(this.unit)} × ${this.count})`;
  }
}

/** Arrays or objects nested `depth` levels around `leaf`. */
class Nested {
  constructor(
    readonly kind: 'array' | 'object',
    readonly depth: number,
  ) {}
  toJSON(): unknown {
    let value: unknown = 'leaf';
    for (let level = 0; level < this.depth; level++) value = this.kind === 'array' ? [value] : { a: value };
    return value;
  }
  [fc.toStringMethod](): string {
    return `Nested(${this.kind} × ${this.depth})`;
  }
}

const hugeString = fc.record({
  unit: fc.constantFrom('x', 'é', '😀', '\u0000', '\uD800', '"', '\\'),
  count: fc.integer({ min: 300, max: 1_500_000 }),
}).map(({ unit, count }) => new Huge(unit, count));

const nested = fc.record({ kind: fc.constantFrom('array', 'object'), depth: fc.integer({ min: 1, max: 150 }) })
  .map(({ kind, depth }) => new Nested(kind as 'array' | 'object', depth));

/** What replaces a field of a valid body: a wrong type, a huge or nasty string, deep nesting. */
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  nastyString,
  hugeString,
  nested,
  fc.constantFrom(null, true, 0, -0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, '', [], {}),
  fc.array(nastyString, { minLength: 1, maxLength: 3 }),
  fc.integer({ min: 1000, max: 20_000 }).map((count) => Array.from({ length: count }, (_, index) => `id-${index}`)),
);

// ---------------------------------------------------------------------------------------------
// Valid values from a route's JSON Schema (the one the OpenAPI document is built from).

const COMPONENTS = buildOpenApiDocument(ROUTES).components.schemas as Record<string, JsonSchema>;
const MAX_GENERATED_DEPTH = 4;

function validValue(schema: JsonSchema, field: string | undefined, depth: number): fc.Arbitrary<unknown> {
  if (field && SEED_FIELDS[field] && (schema.type === 'string' || schema.anyOf))
    return fc.oneof(fc.constant(SEED_FIELDS[field]()), fc.string({ minLength: 1, maxLength: 12 }));
  if (typeof schema.$ref === 'string') return validValue(COMPONENTS[schema.$ref.split('/').pop()!], field, depth);
  if (Array.isArray(schema.anyOf ?? schema.oneOf))
    return fc.oneof(...((schema.anyOf ?? schema.oneOf) as JsonSchema[]).map((option) => validValue(option, field, depth)));
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (type.length > 1) return fc.oneof(...type.map((one) => validValue({ type: one }, field, depth)));
  switch (type[0]) {
    case 'object':
      return validObject(schema, depth);
    case 'array':
      if (depth >= MAX_GENERATED_DEPTH) return fc.constant([]);
      return fc.array(validValue(schema.items as JsonSchema, field, depth + 1), { maxLength: 3 });
    case 'string':
      return validString(schema);
    case 'integer':
      return fc.integer({ min: (schema.minimum as number) ?? -1000, max: (schema.maximum as number) ?? 1000 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function validObject(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  if (Object.keys(properties).length === 0) {
    const additional = schema.additionalProperties;
    const values = typeof additional === 'object' ? validValue(additional as JsonSchema, undefined, depth + 1) : fc.jsonValue({ maxDepth: 1 });
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), values, { maxKeys: 3 });
  }
  const required = (schema.required ?? []) as string[];
  const model = Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, validValue(value, key, depth + 1)]));
  return fc.record(model, { requiredKeys: required });
}

function validString(schema: JsonSchema): fc.Arbitrary<string> {
  switch (schema.format) {
    case 'uri':
      return fc.webUrl();
    case 'email':
      return fc.emailAddress();
    case 'date-time':
      return fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((date) => date.toISOString());
    case 'uuid':
      return fc.uuid();
    case 'jwt':
      return fc.constant('eyJhbGciOiJIUzUxMiJ9.eyJhcHBfaWQiOiJ4In0.c2ln');
    default: {
      const minLength = (schema.minLength as number) ?? 0;
      return fc.string({ unit: 'grapheme', minLength: Math.max(minLength, 1), maxLength: Math.min((schema.maxLength as number) ?? 16, 16) });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Mutations of a valid body: one value anywhere in it replaced, a key added or a key removed.

type Json = unknown;
function pathsOf(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  if (value === null || typeof value !== 'object') return [];
  const entries = Array.isArray(value) ? value.map((entry, index) => [index, entry] as const) : Object.entries(value);
  return entries.flatMap(([key, entry]) => [[...prefix, key], ...pathsOf(entry, [...prefix, key])]);
}

function withValueAt(value: Json, path: (string | number)[], replacement: unknown, remove: boolean): Json {
  if (path.length === 0) return replacement;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  const [head, ...rest] = path;
  if (rest.length === 0 && remove) delete copy[head];
  else copy[head] = withValueAt(copy[head], rest, replacement, remove);
  return copy;
}

const mutation = fc.record({
  kind: fc.constantFrom('replace', 'replace', 'replace', 'remove', 'addKey'),
  pick: fc.nat(),
  key: fc.oneof(nastyString, fc.constantFrom('__proto__', 'constructor', 'toString', 'id', 'hasOwnProperty')),
  value: nastyValue,
});

function mutate(body: Json, change: typeof mutation extends fc.Arbitrary<infer T> ? T : never): Json {
  const paths = pathsOf(body);
  const path = paths.length > 0 ? paths[change.pick % paths.length] : [];
  if (change.kind === 'addKey') {
    const parent = path.slice(0, -1);
    const target = parent.reduce<Json>((node, key) => (node as Record<string | number, Json>)[key], body);
    const key = Array.isArray(target) ? target.length : change.key;
    return withValueAt(body, [...parent, key], change.value, false);
  }
  return withValueAt(body, path, change.value, change.kind === 'remove' && path.length > 0);
}

/** A request body as sent: JSON text, with what it was made from for the counterexample. */
interface BodyCase {
  made: string;
  value?: unknown;
  text?: string;
  contentType?: string;
}

const CONTENT_TYPES = ['application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', undefined];

function bodyCases(route: RouteDef): fc.Arbitrary<BodyCase> {
  const valid = route.body ? validValue(route.body.jsonSchema(), undefined, 0) : fc.constant({});
  const contentType = fc.constantFrom(...CONTENT_TYPES);
  return fc.oneof(
    { weight: 2, arbitrary: fc.record({ made: fc.constant('valid'), value: valid, contentType }) },
    { weight: 5, arbitrary: fc.record({ made: fc.constant('mutated'), value: fc.tuple(valid, mutation).map(([body, change]) => mutate(body, change)), contentType }) },
    { weight: 2, arbitrary: fc.record({ made: fc.constant('any JSON'), value: fc.oneof(fc.jsonValue(), fc.object()), contentType }) },
    {
      weight: 1,
      arbitrary: fc.record({
        made: fc.constant('truncated'),
        text: fc.tuple(valid, fc.nat()).map(([body, cut]) => {
          const text = JSON.stringify(body);
          return text.slice(0, cut % Math.max(text.length, 1));
        }),
        contentType,
      }),
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Query strings and path parameters.

const queryValue = fc.oneof(
  nastyString,
  fc.constantFrom('', '0', '-1', '1.5', '1e3', '0x10', ' 5', '9'.repeat(400), 'true', 'ascending', 'DESCENDING', '{}', '[]', 'null'),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.record({ metadata: fc.jsonValue({ maxDepth: 2 }) }).map((value) => JSON.stringify(value)),
  fc.jsonValue({ maxDepth: 2 }).map((value) => Buffer.from(JSON.stringify(value)).toString('base64')),
  fc.integer({ min: 1000, max: 8000 }).map((count) => 'q'.repeat(count)),
);

function queryStrings(route: RouteDef): fc.Arbitrary<string> {
  const known = Object.keys(route.query?.shape ?? {});
  const key = fc.oneof(...(known.length > 0 ? [fc.constantFrom(...known)] : []), fc.constantFrom('limit', 'token', 'filter', 'x'), nastyString);
  const pair = fc.tuple(key, queryValue, fc.boolean());
  return fc.array(pair, { maxLength: 5 }).map((pairs) =>
    pairs
      // Properly encoded, or raw bytes (bad `%` escapes, `&`, `#`, non-ASCII) as a careless client sends them.
      .map(([name, value, raw]) => (raw ? `${rawPathPart(name)}=${rawPathPart(value)}` : `${encodeUtf8(name)}=${encodeUtf8(value)}`))
      .join('&')
      // Within Node's 16 KB limit on the request head (beyond it, see fuzz-bodies.test.ts).
      .slice(0, 12_000),
  );
}

/** Percent-encodes the UTF-8 bytes of `text` (a lone surrogate becomes U+FFFD, as any encoder does). */
function encodeUtf8(text: string): string {
  return [...Buffer.from(text, 'utf8')]
    .map((byte) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

/** Sent as is where HTTP allows it (`/`, `%`, `?`, `#`, `..` stay raw); only what a request line cannot carry is escaped. */
function rawPathPart(text: string): string {
  return [...text].map((char) => (/^[\x21-\x7e]$/.test(char) ? char : encodeUtf8(char))).join('');
}

const pathValue = fc.oneof(
  nastyString,
  fc.constantFrom('cord:', 'cord:x', `cord:${randomUUID()}`, 'CORD:x', '..', '.', '%', '%2F', '%00', '%2e%2e', 'a b', ' '),
  fc.uuid(),
  fc.integer({ min: 300, max: 5000 }).map((count) => 'p'.repeat(count)),
);

interface PathCase {
  values: Record<string, string | null>;
  raw: boolean;
}

function pathCases(route: RouteDef): fc.Arbitrary<PathCase> {
  // null: the seed entity's id, so that a second parameter is reached.
  const values = Object.fromEntries(Object.keys(route.params ?? {}).map((name) => [name, fc.option(pathValue, { freq: 4 })]));
  return fc.record({ values: fc.record(values), raw: fc.boolean() });
}

function buildPath(route: RouteDef, values: Record<string, string | null>, raw: boolean): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = values[name] ?? seedParam(name);
    return raw ? rawPathPart(value) : encodeUtf8(value);
  });
}

// ---------------------------------------------------------------------------------------------
// The properties.

/**
 * The database before the next write request. After a success it is taken anew once background
 * jobs (purges) are done, and first the seed data is put back when the success may have removed it.
 */
let baseline: DatabaseSnapshot;

async function resetBaseline(restoreSeeds: boolean): Promise<void> {
  // Relayed events and queued work change rows in the background: let them finish first (also
  // the work of restored seeds).
  await waitForBackgroundWork(system);
  if (restoreSeeds) {
    await ensureSeeds();
    await waitForBackgroundWork(system);
  }
  baseline = await snapshotDatabase(system.sql);
}

/**
 * The database without job bookkeeping: a batch rejected by its job (an unknown member is found
 * only there) keeps its record with that error, which GET /v1/batch/<jobID> reports,
 * and a refusal sent with an Idempotency-Key is kept for its repeat.
 */
function storedData(snapshot: DatabaseSnapshot): DatabaseSnapshot {
  const { 'identity.batches': _batches, ...data } = snapshot;
  return Object.fromEntries(Object.entries(data).filter(([table]) => !table.endsWith('.idempotency_keys')));
}

/** Successes that may delete or rename seed data (a thread's or message's `id`). */
const mayRemoveSeeds = (route: RouteDef) => route.method === 'DELETE' || route.id === 'threads.update' || route.id === 'messages.update';

/** Sends one fuzzed request and checks the answer; a rejected write must change nothing. */
async function check(route: RouteDef, path: string, options: { body?: BodyCase; query?: string }): Promise<void> {
  const { body } = options;
  const text = body ? (body.text ?? JSON.stringify(body.value) ?? '') : undefined;
  const headers = body?.contentType ? { 'content-type': body.contentType } : undefined;
  const target = options.query ? `${path}?${options.query}` : path;
  const answer = await send(system.url, route.method, target, { token: tokens[route.auth], body: text, headers });
  expectEnvelope(answer);
  if (route.method === 'GET') return;
  if (answer.status >= 400) {
    expect(storedData(await snapshotDatabase(system.sql)), `${answer.status} ${answer.text.slice(0, 300)}`).toEqual(storedData(baseline));
    return;
  }
  // A rotation answers the application's new secret: sign with it from now on (the secret before
  // stops working at the next rotation).
  const rotated = answer.body as { applicationID?: unknown; secret?: unknown } | undefined;
  if (rotated?.applicationID === app.id && typeof rotated.secret === 'string') tokens.app = await serverToken(app.id, rotated.secret);
  await resetBaseline(mayRemoveSeeds(route));
}

/** Runs per route, bounded for CI: every write request costs a database snapshot. */
const RUNS = { body: 20, query: { read: 12, write: 5 }, path: 12, token: 40, idempotencyKey: 12 };

function assertProperty<T>(arbitrary: fc.Arbitrary<T>, numRuns: number, predicate: (value: T) => Promise<void>) {
  const replay = process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED), path: process.env.FUZZ_PATH } : {};
  // No shrinking: the system keeps state between runs, so the first failure is the one to read.
  return fc.assert(fc.asyncProperty(arbitrary, predicate), { numRuns, endOnFailure: true, ...replay });
}

beforeAll(async () => {
  ({ system, app, tokens } = await startFuzzSystem('fuzz'));
  await ensureSeeds();
});
afterAll(async () => {
  agent.destroy();
  await system?.stop();
});

const label = (route: RouteDef) => `${route.method} ${route.path}`;
const writes = ROUTES.filter((route) => route.method !== 'GET');
const withParams = ROUTES.filter((route) => Object.keys(route.params ?? {}).length > 0);

describe('fuzzed bodies: random JSON, mutated valid bodies, truncated JSON', () => {
  it.each(writes.map((route) => [label(route), route] as const))('%s', async (_, route) => {
    await resetBaseline(false);
    await assertProperty(bodyCases(route), RUNS.body, (body) => check(route, buildPath(route, {}, false), { body }));
  }, 120_000);
});

/** Characters a client can put in a header: printable ASCII, tab, and Latin-1 beyond ASCII. */
const headerChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)) },
  { weight: 1, arbitrary: fc.constantFrom('\t', '\u0080', '\u00e9', '\u00ff') },
);
const idempotencyKeys = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: headerChar, maxLength: 40 }) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 250, max: 260 }), headerChar).map(([length, char]) => char.repeat(length)) },
);
/** The key as the server reads it (HTTP drops the spaces and tabs around a header value), when valid. */
function validKey(sent: string): boolean {
  const key = sent.replace(/^[ \t]+|[ \t]+$/g, '');
  return key.length >= 1 && key.length <= 255 && /^[\x20-\x7e]+$/.test(key);
}
const idempotentRoutes = ROUTES.filter((route) => route.idempotent);

describe('fuzzed Idempotency-Key headers: empty, too long, tabs, Latin-1; a valid key answers its repeat the same', () => {
  it.each(idempotentRoutes.map((route) => [label(route), route] as const))('%s', async (_, route) => {
    await resetBaseline(false);
    const valid = route.body ? validValue(route.body.jsonSchema(), undefined, 0) : fc.constant({});
    await assertProperty(fc.tuple(idempotencyKeys, valid), RUNS.idempotencyKey, async ([key, body]) => {
      // Every run is a first request with its key.
      for (const schema of ['identity', 'conversation', 'notification']) await system.sql.query(`DELETE FROM ${schema}.idempotency_keys`);
      const path = buildPath(route, {}, false);
      const sent = () =>
        send(system.url, route.method, path, { token: tokens[route.auth], json: body, headers: { 'idempotency-key': key } });
      const answer = await sent();
      expectEnvelope(answer);
      if (!validKey(key)) {
        expect(answer.status, answer.text).toBe(400);
        expect(answer.body).toMatchObject({ error: 'invalid_field', message: expect.stringContaining('Idempotency-Key') });
      } else {
        const repeat = await sent();
        expect({ status: repeat.status, text: repeat.text }).toEqual({ status: answer.status, text: answer.text });
        // A refused upload's body was never read (it is not multipart), so there is no answer to keep.
        if (route.bodyType !== 'multipart') expect(repeat.headers['idempotent-replayed']).toBe('true');
      }
      if (answer.status >= 400)
        expect(storedData(await snapshotDatabase(system.sql)), `${answer.status} ${answer.text.slice(0, 300)}`).toEqual(storedData(baseline));
      else await resetBaseline(false);
    });
  }, 120_000);
});

describe('fuzzed query strings: known and unknown parameters, random values, bad escapes', () => {
  it.each(ROUTES.map((route) => [label(route), route] as const))('%s', async (_, route) => {
    await resetBaseline(false);
    const body: BodyCase | undefined = route.method === 'GET' ? undefined : { made: 'empty object', value: {} };
    await assertProperty(queryStrings(route), route.method === 'GET' ? RUNS.query.read : RUNS.query.write, (query) => check(route, buildPath(route, {}, false), { query, body }));
  }, 120_000);
});

describe('fuzzed path parameters: `/`, `%`, `%2F`, `%00`, spaces, `..`, `cord:`, very long; encoded and raw', () => {
  it.each(withParams.map((route) => [label(route), route] as const))('%s', async (_, route) => {
    await resetBaseline(false);
    const body: BodyCase | undefined = route.method === 'GET' ? undefined : { made: 'empty object', value: {} };
    await assertProperty(pathCases(route), RUNS.path, ({ values, raw }) => check(route, buildPath(route, values, raw), { body }));
  }, 120_000);
});

/**
 * Two or more items in every paged list the seed parameters name, so that a first page of one
 * has a real token to mutate: a second thread, and notifications to the seed user.
 */
async function ensurePagedSeeds(): Promise<void> {
  await ensureSeeds();
  const post = async (path: string, body: unknown) => {
    const answer = await send(system.url, 'POST', path, { token: tokens.app, json: body });
    if (answer.status !== 200) throw new Error(`seeding POST ${path}: ${answer.status} ${answer.text}`);
  };
  // A webhook, so that the messages below leave deliveries in the log (to a name that never
  // resolves, RFC 6761's .invalid: each delivery fails).
  const registered = await send(system.url, 'POST', '/v1/applications/any/webhooks', {
    token: tokens.app,
    json: { url: 'http://receiver.invalid/paged', events: ['thread-message-added'] },
  });
  if (registered.status !== 201) throw new Error(`seeding a webhook: ${registered.status} ${registered.text}`);
  const thread = `fuzz-paged-${randomUUID()}`;
  await post(`/v1/threads/${thread}/messages`, {
    authorID: SEED.user,
    content: [{ type: 'p', children: [{ text: 'seed' }] }],
    createThread: { groupID: SEED.group, location: { page: thread }, url: 'https://example.com/fuzz', name: 'Paged' },
  });
  for (let count = 0; count < 2; count++)
    await post('/v1/notifications', { actor_id: SEED.otherUser, recipient_id: SEED.user, template: '{{actor}} waves', url: 'https://example.com/n', type: 'url' });
  await post(`/v1/threads/${thread}/messages`, { authorID: SEED.user, content: [{ type: 'p', children: [{ text: 'again' }] }] });
  // The events reach the delivery log through the outbox relay: wait for two deliveries.
  for (const deadline = Date.now() + 20_000; ; ) {
    const log = await send(system.url, 'GET', '/v1/webhooks/deliveries?limit=0', { token: tokens.app });
    if (((log.body as { pagination?: { total?: number } }).pagination?.total ?? 0) >= 2) break;
    if (Date.now() > deadline) throw new Error('seeding: the message events did not reach the delivery log');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('fuzzed pagination tokens on every paged route: random strings, base64 of random JSON, mutated real tokens', () => {
  beforeAll(ensurePagedSeeds);

  it.each(pagedRoutes().map((paged) => [label(paged.route), paged] as const))('%s', async (_, { route, param }) => {
    const path = buildPath(route, {}, false);
    const first = await send(system.url, 'GET', `${path}?limit=1`, { token: tokens[route.auth] });
    expectEnvelope(first, 200);
    const issued = nextPageToken(first.body, first.headers.link as string | undefined);
    expect(issued, 'a first page of one has a next-page token').toEqual(expect.any(String));
    await assertProperty(fc.tuple(forgedPageTokens(issued!), fc.boolean()), RUNS.token, async ([token, raw]) => {
      const value = raw ? rawPathPart(token) : encodeUtf8(token);
      const answer = await send(system.url, 'GET', `${path}?limit=2&${param}=${value}`, { token: tokens[route.auth] });
      // Only the token varies: it is a page, or refused as the token.
      expectEnvelope(answer);
      if (answer.status !== 200) expectEnvelope(answer, 400, 'invalid_field');
    });
  }, 120_000);
});
