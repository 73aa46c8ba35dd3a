/**
 * Token attacks as one table (issue #7 point 1): every forged, stale, misused or dead token × a
 * set of routes (application-level write, delete and read; /v1/applications create, list and
 * delete) answers 401 with the code the token rules give for it, and leaves the database exactly as it
 * was. A control test sends valid tokens to the same routes, so the table can fail. Needs the build
 * (the token CLI revokes through `services/identity/dist`).
 */
import { createHmac, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { createApplication, pollAnswer, request, type TestApplication } from '../support/client.js';
import { snapshotDatabase } from '../support/db-snapshot.js';
import { expectError } from '../support/expect.js';
import { waitForBackgroundWork } from '../support/queues.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';

const run = promisify(execFile);
const TOKEN_CLI = fileURLToPath(new URL('../../services/identity/dist/cli/token.js', import.meta.url));
const DAY = 24 * 60 * 60;
/** A user every application-level route under attack names; seeded in the victim so a delete would show. */
const TARGET_USER = 'attack-target';

type Kind = 'app' | 'customer';
/** The code a bad token of each route kind gets. */
const BAD_TOKEN: Record<Kind, string> = { app: 'invalid_app_token', customer: 'invalid_customer_token' };

interface RouteUnderAttack {
  name: string;
  kind: Kind;
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  /** Path and body for the application the route acts on. */
  path(target: TestApplication): string;
  body?(target: TestApplication): unknown;
}

const ROUTES_UNDER_ATTACK: RouteUnderAttack[] = [
  { name: 'PUT /v1/users/<ID>', kind: 'app', method: 'PUT', path: () => `/v1/users/${TARGET_USER}`, body: () => ({ name: 'Mallory' }) },
  { name: 'GET /v1/users', kind: 'app', method: 'GET', path: () => '/v1/users' },
  {
    name: 'DELETE /v1/users/<ID>',
    kind: 'app',
    method: 'DELETE',
    path: () => `/v1/users/${TARGET_USER}`,
    body: () => ({ permanently_delete: true }),
  },
  { name: 'POST /v1/applications', kind: 'customer', method: 'POST', path: () => '/v1/applications', body: () => ({ name: 'Mallory app' }) },
  { name: 'GET /v1/applications', kind: 'customer', method: 'GET', path: () => '/v1/applications' },
  {
    name: 'DELETE /v1/applications/<ID>',
    kind: 'customer',
    method: 'DELETE',
    path: (target) => `/v1/applications/${target.id}`,
    body: (target) => ({ secret: target.secret }),
  },
];

let system: TestSystem;
/** The application every application-level route acts on, and whose tokens the attacks forge. */
let victim: TestApplication;
let other: TestApplication;
/** An access token of the victim, revoked with the token CLI. */
let revokedAccessToken: string;
/** Tokens of an application that was deleted after they had been used (and cached by the gateway). */
let deleted: { accessToken: string; serverToken: string };
const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
const attackerPem = attacker.publicKey.export({ type: 'spki', format: 'pem' }).toString();

const now = () => Math.floor(Date.now() / 1000);
const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

type Signer = { hmac: string; hash?: 'sha256' | 'sha384' | 'sha512' } | { rsa: KeyObject } | null;

/** A JWT built by hand, so that header, payload and signature can each be anything. */
function jwt(header: Record<string, unknown>, payload: Record<string, unknown>, signer: Signer): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
  if (!signer) return `${input}.`;
  if ('rsa' in signer) return `${input}.${b64url(createSign('RSA-SHA256').update(input).sign(signer.rsa))}`;
  return `${input}.${createHmac(signer.hash ?? 'sha512', signer.hmac).update(input).digest('base64url')}`;
}

/** Who a token of this kind speaks for: the victim application, or the customer. */
function principal(kind: Kind): { claims: Record<string, unknown>; secret: string } {
  return kind === 'app'
    ? { claims: { app_id: victim.id }, secret: victim.secret }
    : { claims: { customer_id: system.customer.id }, secret: system.customer.secret };
}

/** The principal's claims, `iat` now, and `claims`, signed with the principal's own secret (HS512 unless told). */
function forged(kind: Kind, options: { header?: Record<string, unknown>; claims?: Record<string, unknown>; hash?: 'sha256' | 'sha384' } = {}) {
  const { claims, secret } = principal(kind);
  return jwt(
    options.header ?? { alg: 'HS512', typ: 'JWT' },
    { ...claims, iat: now(), ...options.claims },
    { hmac: secret, hash: options.hash },
  );
}

interface Attack {
  name: string;
  /** The route kinds the attack applies to (a valid customer token is no attack on /v1/applications). */
  kinds: Kind[];
  token(kind: Kind): Promise<string> | string;
  /** Defaults to BAD_TOKEN[kind]. */
  code?: Partial<Record<Kind, string>>;
}

const BOTH: Kind[] = ['app', 'customer'];

const ATTACKS: Attack[] = [
  // Algorithms: HS512 only.
  { name: 'alg none, no signature', kinds: BOTH, token: (kind) => jwt({ alg: 'none', typ: 'JWT' }, { ...principal(kind).claims, iat: now() }, null) },
  { name: 'alg none with a valid HS512 signature', kinds: BOTH, token: (kind) => forged(kind, { header: { alg: 'none', typ: 'JWT' } }) },
  { name: 'HS256 with the right secret', kinds: BOTH, token: (kind) => forged(kind, { header: { alg: 'HS256', typ: 'JWT' }, hash: 'sha256' }) },
  { name: 'HS384 with the right secret', kinds: BOTH, token: (kind) => forged(kind, { header: { alg: 'HS384', typ: 'JWT' }, hash: 'sha384' }) },
  { name: 'header HS512, signature HS256', kinds: BOTH, token: (kind) => forged(kind, { hash: 'sha256' }) },
  // RS/HS confusion: an asymmetric token, and HMAC keyed with the attacker's public key.
  {
    name: 'RS256 signed with an attacker RSA key',
    kinds: BOTH,
    token: (kind) => jwt({ alg: 'RS256', typ: 'JWT' }, { ...principal(kind).claims, iat: now() }, { rsa: attacker.privateKey }),
  },
  {
    name: 'RS256 carrying the attacker public key as jwk',
    kinds: BOTH,
    token: (kind) =>
      jwt(
        { alg: 'RS256', typ: 'JWT', jwk: attacker.publicKey.export({ format: 'jwk' }) },
        { ...principal(kind).claims, iat: now() },
        { rsa: attacker.privateKey },
      ),
  },
  {
    name: 'HS256 keyed with the attacker RSA public PEM',
    kinds: BOTH,
    token: (kind) => jwt({ alg: 'HS256', typ: 'JWT' }, { ...principal(kind).claims, iat: now() }, { hmac: attackerPem, hash: 'sha256' }),
  },
  {
    name: 'HS512 keyed with the attacker RSA public PEM',
    kinds: BOTH,
    token: (kind) => jwt({ alg: 'HS512', typ: 'JWT' }, { ...principal(kind).claims, iat: now() }, { hmac: attackerPem }),
  },
  { name: 'HS512 with the right secret, header saying RS256', kinds: BOTH, token: (kind) => forged(kind, { header: { alg: 'RS256', typ: 'JWT' } }) },
  // Key-selection headers, refused even when the signature is right.
  { name: 'jwk header (HS512, right secret)', kinds: BOTH, token: (kind) => forged(kind, { header: { alg: 'HS512', jwk: { kty: 'oct', k: b64url('k') } } }) },
  {
    name: 'jwk header naming the attacker key that signed it',
    kinds: BOTH,
    token: (kind) =>
      jwt({ alg: 'HS512', jwk: { kty: 'oct', k: b64url('attacker key') } }, { ...principal(kind).claims, iat: now() }, { hmac: 'attacker key' }),
  },
  { name: 'jku header', kinds: BOTH, token: (kind) => forged(kind, { header: { alg: 'HS512', jku: 'https://attacker.example/jwks.json' } }) },
  { name: 'x5u header', kinds: BOTH, token: (kind) => forged(kind, { header: { alg: 'HS512', x5u: 'https://attacker.example/cert.pem' } }) },
  { name: 'kid header', kinds: BOTH, token: (kind) => forged(kind, { header: { alg: 'HS512', kid: '../../dev/null' } }) },
  // Lifetime: exp, 24 h (+30 s) after iat, nbf.
  // One second beyond the 30 s tolerance; the clock only moves further while the request runs.
  { name: 'exp 31 s ago', kinds: BOTH, token: (kind) => forged(kind, { claims: { iat: now() - 600, exp: now() - 31 } }) },
  { name: 'iat 24 h + 31 s ago', kinds: BOTH, token: (kind) => forged(kind, { claims: { iat: now() - DAY - 31 } }) },
  {
    name: 'iat older than 24 h, exp in the future',
    kinds: BOTH,
    token: (kind) => forged(kind, { claims: { iat: now() - DAY - 60, exp: now() + 3600 } }),
  },
  { name: 'no iat', kinds: BOTH, token: (kind) => forged(kind, { claims: { iat: undefined } }) },
  { name: 'nbf an hour ahead', kinds: BOTH, token: (kind) => forged(kind, { claims: { nbf: now() + 3600 } }) },
  // Claims.
  {
    name: 'a claim the token kind forbids',
    kinds: BOTH,
    token: (kind) => forged(kind, { claims: kind === 'app' ? { role: 'admin' } : { app_id: victim.id } }),
  },
  {
    name: 'a client token (project_id and user_id)',
    kinds: BOTH,
    token: () => jwt({ alg: 'HS512', typ: 'JWT' }, { project_id: victim.id, user_id: TARGET_USER, iat: now() }, { hmac: victim.secret }),
  },
  { name: "the victim's app_id signed with another application's secret", kinds: ['app'], token: () => serverToken(victim.id, other.secret) },
  { name: 'a customer token signed with an application secret', kinds: ['customer'], token: () => customerToken(system.customer.id, victim.secret) },
  // The wrong kind of valid token.
  { name: 'a valid customer token', kinds: ['app'], token: () => customerToken(system.customer.id, system.customer.secret) },
  { name: 'a valid server token', kinds: ['customer'], token: () => serverToken(victim.id, victim.secret) },
  { name: 'a valid access token', kinds: ['customer'], token: () => authorize(victim).then(({ accessToken }) => accessToken) },
  // Dead tokens.
  { name: 'a revoked access token', kinds: BOTH, token: () => revokedAccessToken, code: { app: 'expired_access_token' } },
  { name: 'an access token of a deleted application', kinds: BOTH, token: () => deleted.accessToken, code: { app: 'invalid_access_token' } },
  { name: 'a server token of a deleted application', kinds: BOTH, token: () => deleted.serverToken, code: { app: 'application_not_found' } },
];

const send = (route: RouteUnderAttack, target: TestApplication, token: string) =>
  request(system.url, route.method, route.path(target), { token, body: route.body?.(target) });

async function authorize(application: TestApplication) {
  const response = await request(system.url, 'POST', '/v1/authorize', {
    body: { signed_app_token: await serverToken(application.id, application.secret) },
  });
  expect(response.status).toBe(200);
  const accessToken: string = response.body.access_token;
  return { accessToken, sessionId: decodeJwt(accessToken).session_id as string };
}

const readUsers = (token: string) => request(system.url, 'GET', '/v1/users', { token });

systemForFile(async (started) => {
  system = started;
  victim = await createApplication(system, 'victim app');
  other = await createApplication(system, 'other app');
  expect((await victim.client.put(`/v1/users/${TARGET_USER}`, { name: 'Target' })).status).toBe(200);

  // Revoked the way an operator does it, after a use so the gateway has the session cached.
  const revoked = await authorize(victim);
  revokedAccessToken = revoked.accessToken;
  expect((await readUsers(revokedAccessToken)).status).toBe(200);
  await run(process.execPath, [TOKEN_CLI, 'revoke', revoked.sessionId], {
    env: { ...process.env, ...system.env },
  });

  // Deleted after its tokens were used, so the gateway has its secret and session cached.
  const doomed = await createApplication(system, 'doomed app');
  await doomed.client.put(`/v1/users/${TARGET_USER}`, { name: 'Doomed' });
  deleted = { accessToken: (await authorize(doomed)).accessToken, serverToken: await serverToken(doomed.id, doomed.secret) };
  for (const token of Object.values(deleted)) expect((await readUsers(token)).status).toBe(200);
  const deletion = await request(system.url, 'DELETE', `/v1/applications/${doomed.id}`, {
    token: await customerToken(system.customer.id, system.customer.secret),
    body: { secret: doomed.secret },
  });
  expect(deletion.status).toBe(200);
  await waitForBackgroundWork(system);

  // Invalidations reach the gateway over Redis pub/sub, asynchronously: wait (with a harmless read)
  // until the gateway has dropped every cached credential, so that no attack below meets a stale one.
  for (const token of [revokedAccessToken, ...Object.values(deleted)])
    expect((await pollAnswer(() => readUsers(token), (response) => response.status !== 200)).status).toBe(401);
});

describe.each(ROUTES_UNDER_ATTACK)('$name', (route) => {
  const attacks = ATTACKS.filter((attack) => attack.kinds.includes(route.kind));

  it.each(attacks)('$name → 401 and nothing changes', async (attack) => {
    // Built first: minting an access token opens a session, which is not the attack.
    const token = await attack.token(route.kind);
    const before = await snapshotDatabase(system.sql);
    const response = await send(route, victim, token);
    expectError(response, 401, attack.code?.[route.kind] ?? BAD_TOKEN[route.kind]);
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });
});

describe('control: the same routes with valid tokens', () => {
  it('succeed, and each write shows in the database snapshot', async () => {
    const target = await createApplication(system, 'control app');
    const validToken = (kind: Kind) =>
      kind === 'app' ? serverToken(target.id, target.secret) : customerToken(system.customer.id, system.customer.secret);
    for (const route of ROUTES_UNDER_ATTACK) {
      const before = await snapshotDatabase(system.sql);
      const response = await send(route, target, await validToken(route.kind));
      expect(response.status, `${route.name}: ${JSON.stringify(response.body)}`).toBe(200);
      // A delete's purge runs in the background: let it finish, so no later snapshot races it.
      await waitForBackgroundWork(system);
      const after = await snapshotDatabase(system.sql);
      if (route.method === 'GET') expect(after, route.name).toEqual(before);
      else expect(after, route.name).not.toEqual(before);
    }
  });

  it('a customer token with nbf in the past is accepted (nbf is a claim the reference checks, not a forbidden one)', async () => {
    const token = await customerToken(system.customer.id, system.customer.secret, { claims: { nbf: now() - 60 } });
    expect((await request(system.url, 'GET', '/v1/applications', { token })).status).toBe(200);
  });

  it('POST /v1/authorize refuses a signed_app_token whose nbf is ahead, and opens no session', async () => {
    const before = await snapshotDatabase(system.sql);
    const token = await serverToken(victim.id, victim.secret, { claims: { nbf: now() + 3600 } });
    const response = await request(system.url, 'POST', '/v1/authorize', { body: { signed_app_token: token } });
    expectError(response, 401, 'invalid_app_token', 'NotBeforeError: jwt not active');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });
});
