/**
 * What the fuzz tests (test/resilience/fuzz-*.test.ts) share: a system with one application and a
 * token for each kind of route, the answer they read off the wire, the check every answer passes,
 * and generators of nasty strings and forged pagination tokens.
 */
import type http from 'node:http';
import { ERROR_CATALOG, type RouteDef } from '@collab/shared';
import fc from 'fast-check';
import { expect } from 'vitest';
import { createApplication, type TestApplication } from './client.js';
import { startSystem, type TestSystem } from './system.js';
import { clientToken, customerToken, serverToken } from './tokens.js';

/** An HTTP answer as received: its body parsed as JSON where it is JSON, undefined otherwise. */
export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: unknown;
}

/** A bearer token for each kind of route (route.auth) that takes one. */
export type RouteTokens = Partial<Record<RouteDef['auth'], string>>;

/** A whole system, an application in it and the tokens to call every route with. */
export async function startFuzzSystem(applicationName: string): Promise<{ system: TestSystem; app: TestApplication; tokens: RouteTokens }> {
  // Fuzzed webhook URLs are never retried: one attempt each, refused or failed, then final.
  const system = await startSystem({ env: { WEBHOOK_RETRY_HOURS: '0' } });
  const app = await createApplication(system, applicationName);
  // Client routes read as a user of the application, in a group of theirs.
  const viewer = await app.client.put('/v1/users/fuzz-viewer', { name: 'Fuzz viewer', addGroups: [] });
  if (viewer.status !== 200) throw new Error(`creating the fuzz viewer failed: ${JSON.stringify(viewer.body)}`);
  const tokens: RouteTokens = {
    app: await serverToken(app.id, app.secret),
    customer: await customerToken(system.customer.id, system.customer.secret),
    client: await clientToken(app.id, app.secret, { user_id: 'fuzz-viewer' }),
  };
  return { system, app, tokens };
}

/** `text` parsed as JSON, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Below 500 and with a request id; an error (4xx) is exactly the error envelope: `{error,
 * message}`, a catalog code and a non-empty text. `status` and `code`, when given, must match too.
 */
export function expectEnvelope(answer: Answer, status?: number, code?: string): void {
  const summary = `${answer.status} ${answer.text.slice(0, 500)}`;
  expect(answer.status, summary).toBeLessThan(500);
  if (status !== undefined) expect(answer.status, summary).toBe(status);
  expect(answer.headers['x-request-id'], summary).toBeTruthy();
  if (answer.status < 400) return;
  expect(answer.headers['content-type'], summary).toMatch(/^application\/json/);
  const body = answer.body as Record<string, unknown>;
  expect(Object.keys(body ?? {}).sort(), summary).toEqual(['error', 'message']);
  expect(Object.keys(ERROR_CATALOG), summary).toContain(body.error);
  if (code !== undefined) expect(body.error, summary).toBe(code);
  expect(typeof body.message === 'string' && body.message.length > 0, summary).toBe(true);
}

const FRAGMENTS = [
  '\u0000', '\uD800', '\uDFFF', '\uFFFE', '\uFEFF', '\u202E', '\u200B', '\u0085', '😀', 'é', 'ß', '漢',
  '\n', '\r\n', '\t', ' ', '/', '\\', '%', '%2F', '%00', '%zz', '%ED%A0%80', '%C0%AF', '..', '.', 'cord:',
  '?', '#', '&', '=', '+', ';', '"', "'", '<x>', '{}', '[]', 'null', '-1', '1e309', 'NaN',
];

/** Short strings built from troublemakers: NUL, lone surrogates, separators, escapes, `cord:`. */
export const nastyString = fc
  .array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ unit: 'binary', maxLength: 6 })), { maxLength: 6 })
  .map((parts) => parts.join(''));

const IMPOSSIBLE_DATES = [
  '2024-13-45 99:99:99', '2023-02-29 00:00:00.000000', '2024-04-31 12:00:00', '2024-01-01 24:00:00', '2024-01-01 23:59:60',
  '0000-01-01 00:00:00', '2024-00-00 00:00:00', '99999-01-01 00:00:00', '-2024-01-01 00:00:00', '2024-01-01 00:00:00.1234567',
  '2024-01-01T00:00:00Z', '2024-1-1 0:0:0', 'infinity', 'epoch', 'now', 'yesterday',
];

/** What replaces a field of a real token: wrong types, impossible dates, huge numbers, empty or unstorable text. */
const forgedField: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...IMPOSSIBLE_DATES),
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e21, 1e308, Number.MAX_SAFE_INTEGER + 2, [], {}, ['x'], { a: 1 }),
  fc.constantFrom('', ' ', '9223372036854775808', '-1', '1.5', '1e3', '0x10', '００１'),
  fc.bigInt({ min: 10n ** 17n, max: 10n ** 40n }).map(String),
  fc.integer({ min: 300, max: 3000 }).map((count) => '9'.repeat(count)),
  nastyString,
  fc.jsonValue({ maxDepth: 2 }),
);

/** How a forged token's JSON is sent: standard base64, URL-safe base64, `+` as a space, or cut short. */
const tokenEncoding = fc.constantFrom('base64', 'base64url', 'space for +', 'truncated');

function encodeToken(json: unknown, encoding: string): string {
  const base64 = Buffer.from(JSON.stringify(json) ?? '', 'utf8').toString(encoding === 'base64url' ? 'base64url' : 'base64');
  if (encoding === 'space for +') return base64.replaceAll('+', ' ');
  return encoding === 'truncated' ? base64.slice(0, Math.ceil(base64.length / 2)) : base64;
}

/**
 * Pagination tokens a client may send instead of `issued`, a real one from a first page: random
 * strings, base64 of random JSON, and `issued` with its fields replaced (wrong types, impossible
 * dates, huge numbers, empty strings), removed or joined by others.
 */
export function forgedPageTokens(issued: string): fc.Arbitrary<string> {
  const real = JSON.parse(Buffer.from(issued, 'base64').toString('utf8')) as Record<string, unknown>;
  const keys = Object.keys(real);
  const mutated = fc
    .record({
      replaced: fc.dictionary(fc.constantFrom(...keys), forgedField, { minKeys: 1 }),
      removed: fc.subarray(keys, { maxLength: 1 }),
      added: fc.dictionary(fc.oneof(nastyString, fc.constantFrom('__proto__', 'constructor', 'userID', 'externalID')), forgedField, { maxKeys: 2 }),
      encoding: tokenEncoding,
    })
    .map(({ replaced, removed, added, encoding }) => {
      const json: Record<string, unknown> = { ...real, ...added, ...replaced };
      for (const key of removed) delete json[key];
      return encodeToken(json, encoding);
    });
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 1, arbitrary: fc.oneof(nastyString, fc.string({ unit: 'binary', maxLength: 40 }), fc.base64String({ maxLength: 60 })) },
    { weight: 2, arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 3 }), tokenEncoding).map(([json, encoding]) => encodeToken(json, encoding)) },
    { weight: 1, arbitrary: fc.constantFrom(issued, issued.replaceAll('+', ' ')) },
  );
}
