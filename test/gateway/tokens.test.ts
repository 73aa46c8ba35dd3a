/**
 * Every token rule (Authorization header, server tokens, customer tokens, access
 * tokens, POST /v1/authorize, GET /v1/verify), checked through the real gateway.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createLogger } from '@collab/shared';
import { decodeJwt, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { loadIdentityConfig } from '../../services/identity/src/config.js';
import { createIdentityContext } from '../../services/identity/src/service.js';
import { revokeApplicationSessions, revokeSession } from '../../services/identity/src/domain/auth/auth.js';
import { asCustomer, createApplication, pollAnswer, request, type ApiResponse, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';
import { expectError } from '../support/expect.js';

const run = promisify(execFile);
const TOKEN_CLI = fileURLToPath(new URL('../../services/identity/dist/cli/token.js', import.meta.url));
const DAY = 24 * 60 * 60;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let system: TestSystem;
let app: TestApplication;
let other: TestApplication;

systemWithApplication('token app', async (started) => {
  ({ system, app } = started);
  other = await createApplication(system, 'other app');
});

const now = () => Math.floor(Date.now() / 1000);
const b64url = (text: string) => Buffer.from(text).toString('base64url');

/** A JWT built by hand, so that headers, algorithms and payloads can be anything. */
function rawJwt(options: {
  header?: Record<string, unknown>;
  payload?: unknown;
  /** The payload segment's text, used instead of JSON-encoding `payload`. */
  payloadText?: string;
  secret?: string | null;
  hash?: 'sha256' | 'sha384' | 'sha512';
}): string {
  const header = b64url(JSON.stringify(options.header ?? { alg: 'HS512', typ: 'JWT' }));
  const payload = b64url(options.payloadText ?? JSON.stringify(options.payload));
  const input = `${header}.${payload}`;
  if (options.secret === null || options.secret === undefined) return `${input}.`;
  return `${input}.${createHmac(options.hash ?? 'sha512', options.secret).update(input).digest('base64url')}`;
}

const get = (path: string, token?: string | null, headers?: Record<string, string>) =>
  request(system.url, 'GET', path, { token, headers });
const verify = (token: string) => get('/v1/verify', token);
const withHeader = (path: string, authorization: string) => get(path, null, { authorization });


function expectVerifiedAs(response: ApiResponse, application: TestApplication, name: string) {
  expect(response.status).toBe(200);
  expect(response.body).toEqual({ success: true, application_id: application.id, application_name: name });
}

/** What the token CLI needs to reach this system's database and gateways. */
function cliEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: system.env.DATABASE_URL,
    REDIS_URL: system.env.REDIS_URL,
    REDIS_PREFIX: system.env.REDIS_PREFIX,
  };
}

async function authorize(application: TestApplication = app) {
  const response = await request(system.url, 'POST', '/v1/authorize', {
    body: { signed_app_token: await serverToken(application.id, application.secret) },
  });
  expect(response.status).toBe(200);
  const accessToken: string = response.body.access_token;
  return { accessToken, sessionId: decodeJwt(accessToken).session_id as string, body: response.body };
}

describe('the Authorization header', () => {
  it('is required: absent → 401 missing_authorization_header', async () => {
    expectError(await get('/v1/verify'), 401, 'missing_authorization_header');
    expectError(await get('/v1/applications'), 401, 'missing_authorization_header');
  });

  it('is required: empty → 401 missing_authorization_header', async () => {
    expectError(await withHeader('/v1/verify', ''), 401, 'missing_authorization_header');
  });

  it('must start with "Bearer" → otherwise 401 invalid_authorization_header', async () => {
    const token = await serverToken(app.id, app.secret);
    const basic = await withHeader('/v1/verify', `Basic ${token}`);
    expectError(basic, 401, 'invalid_authorization_header');
    expect(basic.body.message).toBe('Expecting a token with a Bearer prefix.');
    // The prefix is case-sensitive.
    expectError(await withHeader('/v1/verify', `bearer ${token}`), 401, 'invalid_authorization_header');
    // A bare token without any prefix.
    expectError(await withHeader('/v1/applications', token), 401, 'invalid_authorization_header');
  });

  it('checks the prefix before the token shape', async () => {
    const response = await withHeader('/v1/verify', 'Token not-a-jwt');
    expect(response.body.message).toBe('Expecting a token with a Bearer prefix.');
  });

  it('"BearerXYZ" passes the prefix check and fails the JWT check', async () => {
    const response = await withHeader('/v1/verify', 'BearerXYZ');
    expectError(response, 401, 'invalid_authorization_header');
    expect(response.body.message).toBe('Input type for authorization header bearer token is not valid, expected JWT.');
  });

  it('rejects a valid token glued to "Bearer" without a space', async () => {
    const token = await serverToken(app.id, app.secret);
    expectError(await withHeader('/v1/verify', `Bearer${token}`), 401, 'invalid_authorization_header');
    expectError(
      await withHeader('/v1/applications', `Bearer${await customerToken(system.customer.id, system.customer.secret)}`),
      401,
      'invalid_authorization_header',
    );
  });

  it.each([
    ['two segments', 'abc.def'],
    ['four segments', 'abc.def.ghi.jkl'],
    ['one segment', 'abcdef'],
    ['characters outside base64url', 'ab+c.d/ef.ghi'],
    ['only "Bearer "', ''],
  ])('rejects a token that is not three base64url segments (%s) → 401 invalid_authorization_header', async (_name, token) => {
    expectError(await withHeader('/v1/verify', `Bearer ${token}`), 401, 'invalid_authorization_header');
    expectError(await withHeader('/v1/applications', `Bearer ${token}`), 401, 'invalid_authorization_header');
  });

  it('tolerates extra spaces around the token', async () => {
    expectVerifiedAs(await withHeader('/v1/verify', `Bearer   ${await serverToken(app.id, app.secret)}  `), app, 'token app');
  });
});

describe('server tokens', () => {
  it('accepts a token without exp', async () => {
    expectVerifiedAs(await verify(await serverToken(app.id, app.secret)), app, 'token app');
  });

  it('accepts a token with a future exp', async () => {
    expectVerifiedAs(await verify(await serverToken(app.id, app.secret, { exp: now() + 60 })), app, 'token app');
  });

  it('accepts project_id instead of app_id', async () => {
    const token = await new SignJWT({ project_id: app.id })
      .setProtectedHeader({ alg: 'HS512', typ: 'JWT' })
      .setIssuedAt()
      .sign(new TextEncoder().encode(app.secret));
    expectVerifiedAs(await verify(token), app, 'token app');
  });

  it('prefers app_id when both app_id and project_id are present', async () => {
    const token = await serverToken(app.id, app.secret, { claims: { project_id: other.id } });
    expectVerifiedAs(await verify(token), app, 'token app');
  });

  it('accepts an upper-case application id', async () => {
    expectVerifiedAs(await verify(await serverToken(app.id.toUpperCase(), app.secret)), app, 'token app');
  });

  it('acts as the application it names, never another one', async () => {
    expectVerifiedAs(await verify(await serverToken(other.id, other.secret)), other, 'other app');
  });

  it('works on every app endpoint, not only /v1/verify', async () => {
    const response = await get('/v1/users', await serverToken(app.id, app.secret));
    expect(response.status).toBe(200);
  });

  it('is rejected once exp has passed (beyond the 30 s tolerance) → 401 invalid_app_token', async () => {
    const token = await serverToken(app.id, app.secret, { iat: now() - 600, exp: now() - 120 });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it('is rejected when iat is older than 24 h + 30 s → 401 invalid_app_token', async () => {
    expectError(await verify(await serverToken(app.id, app.secret, { iat: now() - DAY - 120 })), 401, 'invalid_app_token');
  });

  it('is rejected when iat is older than 24 h even with a future exp', async () => {
    const token = await serverToken(app.id, app.secret, { iat: now() - DAY - 120, exp: now() + 3600 });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it('is accepted when iat is a minute short of 24 h old', async () => {
    expectVerifiedAs(await verify(await serverToken(app.id, app.secret, { iat: now() - DAY + 60 })), app, 'token app');
  });

  it('is rejected without iat → 401 invalid_app_token', async () => {
    const token = rawJwt({ payload: { app_id: app.id }, secret: app.secret });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it('is rejected when signed with another secret → 401 invalid_app_token', async () => {
    expectError(await verify(await serverToken(app.id, other.secret)), 401, 'invalid_app_token');
    expectError(await verify(await serverToken(app.id, randomBytes(32).toString('hex'))), 401, 'invalid_app_token');
  });

  it('is rejected when its signature was tampered with → 401 invalid_app_token', async () => {
    const token = await serverToken(app.id, app.secret);
    const [header, payload, signature] = token.split('.');
    const flipped = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
    expectError(await verify(`${header}.${payload}.${flipped}`), 401, 'invalid_app_token');
    // Another payload under the original signature.
    const forged = b64url(JSON.stringify({ app_id: other.id, iat: now() }));
    expectError(await verify(`${header}.${forged}.${signature}`), 401, 'invalid_app_token');
  });

  it('is rejected with alg none and an empty signature → 401 invalid_app_token', async () => {
    const token = rawJwt({ header: { alg: 'none', typ: 'JWT' }, payload: { app_id: app.id, iat: now() }, secret: null });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it('is rejected with alg none even when a signature is present → 401 invalid_app_token', async () => {
    const token = rawJwt({ header: { alg: 'none' }, payload: { app_id: app.id, iat: now() }, secret: app.secret });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it.each([
    ['HS256', 'sha256'],
    ['HS384', 'sha384'],
  ] as const)('is rejected when correctly signed with %s → 401 invalid_app_token', async (alg, hash) => {
    const viaRaw = rawJwt({ header: { alg, typ: 'JWT' }, payload: { app_id: app.id, iat: now() }, secret: app.secret, hash });
    expectError(await verify(viaRaw), 401, 'invalid_app_token');
    expectError(await verify(await serverToken(app.id, app.secret, { alg })), 401, 'invalid_app_token');
  });

  it('is rejected when the header claims HS512 but the signature is HS256 → 401 invalid_app_token', async () => {
    const token = rawJwt({ payload: { app_id: app.id, iat: now() }, secret: app.secret, hash: 'sha256' });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it.each([
    ['jwk', { kty: 'oct', k: b64url('attacker key') }],
    ['jku', 'https://attacker.example/jwks.json'],
    ['x5u', 'https://attacker.example/cert.pem'],
    ['kid', 'some-key'],
    ['crit', ['exp']],
  ])('is rejected when its header carries %s, even with a valid signature → 401', async (key, value) => {
    const token = rawJwt({
      header: { alg: 'HS512', typ: 'JWT', [key]: value },
      payload: { app_id: app.id, iat: now() },
      secret: app.secret,
    });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it('rejects a header that is not JSON → 401 invalid_app_token', async () => {
    const token = rawJwt({ payload: { app_id: app.id, iat: now() }, secret: app.secret });
    const [, payload, signature] = token.split('.');
    expectError(await verify(`${b64url('not json')}.${payload}.${signature}`), 401, 'invalid_app_token');
  });

  it.each([
    ['user_id', 'alice'],
    ['org_id', 'group-1'],
    ['nbf', 1],
    ['aud', 'somebody'],
    ['iss', 'me'],
    ['random', true],
  ])('is rejected with the extra claim %s → 401 invalid_app_token', async (claim, value) => {
    const token = await serverToken(app.id, app.secret, { claims: { [claim]: value } });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it.each([
    ['not a UUID', 'not-a-uuid'],
    ['a number', 12345],
    ['null', null],
    ['an object', { id: 'x' }],
    ['a UUID with braces', '{00000000-0000-4000-8000-000000000000}'],
  ])('is rejected when app_id is %s → 401 invalid_app_token', async (_name, appId) => {
    const token = rawJwt({ payload: { app_id: appId, iat: now() }, secret: app.secret });
    expectError(await verify(token), 401, 'invalid_app_token');
  });

  it('is rejected without app_id and project_id → 401 invalid_app_token', async () => {
    expectError(await verify(rawJwt({ payload: { iat: now() }, secret: app.secret })), 401, 'invalid_app_token');
  });

  it('names an unknown application → 401 application_not_found', async () => {
    const unknown = randomUUID();
    const response = await verify(await serverToken(unknown, randomBytes(32).toString('hex')));
    expectError(response, 401, 'application_not_found');
    expect(response.body.message).toContain(unknown);
  });

  it('a customer token on an app endpoint → 401 invalid_app_token', async () => {
    const token = await customerToken(system.customer.id, system.customer.secret);
    expectError(await verify(token), 401, 'invalid_app_token');
    expectError(await get('/v1/users', token), 401, 'invalid_app_token');
  });

  it.each([
    ['an array', JSON.stringify([1, 2])],
    ['a string', JSON.stringify('hello')],
    ['a number', '42'],
    ['null', 'null'],
    ['not JSON', 'not json at all'],
  ])('is rejected when the payload is %s → 401 invalid_app_token', async (_name, payloadText) => {
    expectError(await verify(rawJwt({ payloadText, secret: app.secret })), 401, 'invalid_app_token');
  });

  it('a client token built by the SDK (with user_id) on an app endpoint → 401 invalid_app_token', async () => {
    const token = await serverToken(app.id, app.secret, { claims: { user_id: 'alice', project_id: app.id } });
    expectError(await get('/v1/users', token), 401, 'invalid_app_token');
  });
});

describe('customer tokens', () => {
  const list = (token: string) => get('/v1/applications', token);

  it('are accepted on /v1/applications', async () => {
    const response = await list(await customerToken(system.customer.id, system.customer.secret));
    expect(response.status).toBe(200);
    expect(response.body.map((application: { id: string }) => application.id)).toEqual([app.id, other.id]);
  });

  it('are accepted with an exp and with unrelated extra claims', async () => {
    const token = await customerToken(system.customer.id, system.customer.secret, {
      exp: now() + 60,
      claims: { purpose: 'provisioning' },
    });
    expect((await list(token)).status).toBe(200);
  });

  it('are accepted a minute short of 24 h after iat', async () => {
    const token = await customerToken(system.customer.id, system.customer.secret, { iat: now() - DAY + 60 });
    expect((await list(token)).status).toBe(200);
  });

  it('signed with a wrong secret → 401 invalid_customer_token', async () => {
    expectError(await list(await customerToken(system.customer.id, app.secret)), 401, 'invalid_customer_token');
  });

  it('naming an unknown customer → 401 invalid_customer_token', async () => {
    expectError(await list(await customerToken(randomUUID(), system.customer.secret)), 401, 'invalid_customer_token');
  });

  it('expired by exp → 401 invalid_customer_token', async () => {
    const token = await customerToken(system.customer.id, system.customer.secret, { iat: now() - 600, exp: now() - 120 });
    expectError(await list(token), 401, 'invalid_customer_token');
  });

  it('older than 24 h + 30 s → 401 invalid_customer_token', async () => {
    const token = await customerToken(system.customer.id, system.customer.secret, { iat: now() - DAY - 120 });
    expectError(await list(token), 401, 'invalid_customer_token');
  });

  it('without iat → 401 invalid_customer_token', async () => {
    const token = rawJwt({ payload: { customer_id: system.customer.id }, secret: system.customer.secret });
    expectError(await list(token), 401, 'invalid_customer_token');
  });

  it.each(['app_id', 'project_id', 'user_id', 'org_id'])(
    'containing %s → 401 invalid_customer_token',
    async (claim) => {
      const value = claim.endsWith('app_id') || claim === 'project_id' ? app.id : 'someone';
      const token = await customerToken(system.customer.id, system.customer.secret, { claims: { [claim]: value } });
      expectError(await list(token), 401, 'invalid_customer_token');
    },
  );

  it('with a customer_id that is not a UUID → 401 invalid_customer_token', async () => {
    const token = await customerToken('not-a-uuid', system.customer.secret);
    expectError(await list(token), 401, 'invalid_customer_token');
  });

  it('with alg HS256 or none → 401 invalid_customer_token', async () => {
    const payload = { customer_id: system.customer.id, iat: now() };
    const hs256 = rawJwt({ header: { alg: 'HS256' }, payload, secret: system.customer.secret, hash: 'sha256' });
    expectError(await list(hs256), 401, 'invalid_customer_token');
    expectError(await list(rawJwt({ header: { alg: 'none' }, payload, secret: null })), 401, 'invalid_customer_token');
  });

  it('with a kid header → 401 invalid_customer_token', async () => {
    const token = rawJwt({
      header: { alg: 'HS512', kid: 'k1' },
      payload: { customer_id: system.customer.id, iat: now() },
      secret: system.customer.secret,
    });
    expectError(await list(token), 401, 'invalid_customer_token');
  });

  it('with a payload that is not an object → 401 invalid_customer_token', async () => {
    expectError(await list(rawJwt({ payloadText: '[1]', secret: system.customer.secret })), 401, 'invalid_customer_token');
  });

  it('a server token on /v1/applications → 401 invalid_customer_token', async () => {
    const token = await serverToken(app.id, app.secret);
    expectError(await list(token), 401, 'invalid_customer_token');
    expectError(
      await request(system.url, 'POST', '/v1/applications', { token, body: { name: 'sneaky' } }),
      401,
      'invalid_customer_token',
    );
    expectError(await get(`/v1/projects/${app.id}`, token), 401, 'invalid_customer_token');
  });

  it('an access token on /v1/applications → 401 invalid_customer_token', async () => {
    const { accessToken } = await authorize();
    expectError(await list(accessToken), 401, 'invalid_customer_token');
    expectError(await get(`/v1/applications/${app.id}`, accessToken), 401, 'invalid_customer_token');
  });
});

describe('POST /v1/authorize', () => {
  const authorizeWith = (body: unknown, headers?: Record<string, string>) =>
    request(system.url, 'POST', '/v1/authorize', { body, headers });

  it('needs no Authorization header and answers {access_token, expires} for 24 h', async () => {
    const before = Date.now();
    const response = await authorizeWith({ signed_app_token: await serverToken(app.id, app.secret) });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(['access_token', 'expires']);
    expect(response.body.expires).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const expires = Date.parse(response.body.expires);
    // Within a generous window around now + 24 h; the exact value is checked against the database below.
    expect(expires).toBeGreaterThanOrEqual(before + DAY * 1000 - 5 * 60_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + DAY * 1000 + 5 * 60_000);

    const claims = decodeJwt(response.body.access_token);
    expect(Object.keys(claims).sort()).toEqual(['exp', 'iat', 'session_id']);
    expect(claims.session_id).toMatch(UUID);
    expect(claims.exp! - claims.iat!).toBe(DAY);

    const { rows } = await system.sql.query(
      'SELECT application_id, issued_at, expires_at FROM identity.sessions WHERE id = $1',
      [claims.session_id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].application_id).toBe(app.id);
    expect(rows[0].expires_at.toISOString()).toBe(response.body.expires);
    expect(rows[0].expires_at.getTime() - rows[0].issued_at.getTime()).toBe(DAY * 1000);
  });

  it('ignores an Authorization header, even a broken one', async () => {
    const response = await authorizeWith(
      { signed_app_token: await serverToken(app.id, app.secret) },
      { authorization: 'Basic garbage' },
    );
    expect(response.status).toBe(200);
  });

  it('issues an access token that works on app endpoints as its application', async () => {
    const { accessToken } = await authorize();
    expectVerifiedAs(await verify(accessToken), app, 'token app');
    expect((await get('/v1/users', accessToken)).status).toBe(200);
    const { accessToken: otherToken } = await authorize(other);
    expectVerifiedAs(await verify(otherToken), other, 'other app');
  });

  it('issues a distinct session each time', async () => {
    const first = await authorize();
    const second = await authorize();
    expect(first.sessionId).not.toBe(second.sessionId);
  });

  it('tolerates extra claims other than user_id and org_id', async () => {
    const token = await serverToken(app.id, app.secret, { claims: { purpose: 'testing' } });
    expect((await authorizeWith({ signed_app_token: token })).status).toBe(200);
  });

  it('without signed_app_token → 400 missing_field', async () => {
    const response = await authorizeWith({});
    expectError(response, 400, 'missing_field');
    expect(response.body.message).toBe('Missing required field: signed_app_token.');
  });

  it('with another key → 400 unexpected_field', async () => {
    const response = await authorizeWith({ signed_app_token: await serverToken(app.id, app.secret), foo: 1 });
    expectError(response, 400, 'unexpected_field');
    expect(response.body.message).toBe(
      'foo is not a valid field name for this request. Expected 1 required field: signed_app_token.',
    );
  });

  it.each([
    ['not JWT-shaped', 'hello'],
    ['a number', 42],
    ['null', null],
    ['two segments', 'abc.def'],
  ])('with signed_app_token %s → 400 invalid_field', async (_name, value) => {
    const response = await authorizeWith({ signed_app_token: value });
    expectError(response, 400, 'invalid_field');
    expect(response.body.message).toBe('Input type for signed_app_token is not valid, expected JWT.');
  });

  it.each([
    ['empty', ''],
    ['whitespace', '   '],
    ['malformed JSON', '{"signed_app_token": '],
    ['an array', '[]'],
    ['null', 'null'],
  ])('with an %s body → 400 invalid_request', async (_name, rawBody) => {
    const response = await request(system.url, 'POST', '/v1/authorize', {
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 400, 'invalid_request');
  });

  it('a token without app_id → 401 invalid_app_token', async () => {
    const token = rawJwt({ payload: { iat: now() }, secret: app.secret });
    const response = await authorizeWith({ signed_app_token: token });
    expectError(response, 401, 'invalid_app_token');
    expect(response.body.message).toBe('signed_app_token payload is missing app_id.');
  });

  it('a token with only project_id → 401 invalid_app_token (the alias is not recognised here)', async () => {
    const token = rawJwt({ payload: { project_id: app.id, iat: now() }, secret: app.secret });
    expectError(await authorizeWith({ signed_app_token: token }), 401, 'invalid_app_token');
  });

  it.each(['user_id', 'org_id'])('a token with %s → 401 invalid_app_token', async (claim) => {
    const token = await serverToken(app.id, app.secret, { claims: { [claim]: 'x' } });
    expectError(await authorizeWith({ signed_app_token: token }), 401, 'invalid_app_token');
  });

  it('a token whose app_id is not a UUID → 401 invalid_app_token', async () => {
    const token = rawJwt({ payload: { app_id: 'nope', iat: now() }, secret: app.secret });
    expectError(await authorizeWith({ signed_app_token: token }), 401, 'invalid_app_token');
  });

  it('a token whose payload is not an object → 401 invalid_app_token', async () => {
    const token = rawJwt({ payloadText: '"text"', secret: app.secret });
    expectError(await authorizeWith({ signed_app_token: token }), 401, 'invalid_app_token');
  });

  it('a token for an unknown application → 401 application_not_found', async () => {
    const token = await serverToken(randomUUID(), randomBytes(32).toString('hex'));
    expectError(await authorizeWith({ signed_app_token: token }), 401, 'application_not_found');
  });

  it('a token with a bad signature → 401 invalid_app_token', async () => {
    const token = await serverToken(app.id, other.secret);
    expectError(await authorizeWith({ signed_app_token: token }), 401, 'invalid_app_token');
  });

  it('a token that is too old, expired, or not HS512 → 401 invalid_app_token', async () => {
    const tooOld = await serverToken(app.id, app.secret, { iat: now() - DAY - 120 });
    const expired = await serverToken(app.id, app.secret, { iat: now() - 600, exp: now() - 120 });
    const hs256 = await serverToken(app.id, app.secret, { alg: 'HS256' });
    const unsigned = rawJwt({ header: { alg: 'none' }, payload: { app_id: app.id, iat: now() }, secret: null });
    for (const token of [tooOld, expired, hs256, unsigned])
      expectError(await authorizeWith({ signed_app_token: token }), 401, 'invalid_app_token');
  });

  it('opens no session when it fails', async () => {
    const { rows: before } = await system.sql.query('SELECT count(*)::int AS n FROM identity.sessions');
    await authorizeWith({ signed_app_token: await serverToken(app.id, other.secret) });
    await authorizeWith({ signed_app_token: await serverToken(randomUUID(), app.secret) });
    const { rows: after } = await system.sql.query('SELECT count(*)::int AS n FROM identity.sessions');
    expect(after[0].n).toBe(before[0].n);
  });
});

describe('GET /v1/verify', () => {
  it('names the application of a server token', async () => {
    expectVerifiedAs(await verify(await serverToken(app.id, app.secret)), app, 'token app');
  });

  it('reflects a renamed application', async () => {
    const renamed = await createApplication(system, 'before');
    await asCustomer(system).put(`/v1/applications/${renamed.id}`, { name: 'after' });
    expectVerifiedAs(await verify(await serverToken(renamed.id, renamed.secret)), renamed, 'after');
  });
});

describe('access tokens', () => {
  it('signed with another secret are treated as server tokens → 401 invalid_app_token', async () => {
    const { sessionId } = await authorize();
    const forged = rawJwt({
      payload: { session_id: sessionId, iat: now(), exp: now() + DAY },
      secret: randomBytes(32).toString('hex'),
    });
    expectError(await verify(forged), 401, 'invalid_app_token');
  });

  it('signed with the service secret but without session_id → 401 invalid_access_token', async () => {
    const token = rawJwt({ payload: { iat: now(), exp: now() + DAY }, secret: system.env.ACCESS_TOKEN_SECRET });
    expectError(await verify(token), 401, 'invalid_access_token');
    // Even when it names an application: a token signed with our key is never a server token.
    const withApp = rawJwt({ payload: { app_id: app.id, iat: now() }, secret: system.env.ACCESS_TOKEN_SECRET });
    expectError(await verify(withApp), 401, 'invalid_access_token');
  });

  it('with a session_id that is not a UUID → 401 invalid_access_token', async () => {
    const token = rawJwt({ payload: { session_id: 'abc', iat: now() }, secret: system.env.ACCESS_TOKEN_SECRET });
    expectError(await verify(token), 401, 'invalid_access_token');
  });

  it('with a payload that is not a JSON object → 401 invalid_access_token', async () => {
    for (const payloadText of ['null', '[1]', '"session"', 'not json']) {
      const token = rawJwt({ payloadText, secret: system.env.ACCESS_TOKEN_SECRET });
      expectError(await verify(token), 401, 'invalid_access_token');
    }
  });

  it('with a valid signature and exp in the past → 401 expired_access_token', async () => {
    const { sessionId } = await authorize();
    const token = rawJwt({
      payload: { session_id: sessionId, iat: now() - DAY - 600, exp: now() - 600 },
      secret: system.env.ACCESS_TOKEN_SECRET,
    });
    expectError(await verify(token), 401, 'expired_access_token');
  });

  it('naming an unknown session → 401 invalid_access_token', async () => {
    const token = rawJwt({
      payload: { session_id: randomUUID(), iat: now(), exp: now() + DAY },
      secret: system.env.ACCESS_TOKEN_SECRET,
    });
    const response = await verify(token);
    expectError(response, 401, 'invalid_access_token');
    expect(response.body.message).toBe('No valid session found.');
  });

  it('whose session expiry has passed → 401 expired_access_token', async () => {
    const { accessToken, sessionId } = await authorize();
    // Never used yet, so no gateway has it cached.
    await system.sql.query(`UPDATE identity.sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [
      sessionId,
    ]);
    const response = await verify(accessToken);
    expectError(response, 401, 'expired_access_token');
    expect(response.body.message).toBe('Access token has expired.');
  });

  it('revoked with `npm run token -- revoke <session_id>` → 401 expired_access_token on the next requests', async () => {
    const { accessToken, sessionId } = await authorize();
    // Used first, so the gateway has the session cached: revocation must reach it over Redis.
    expect((await get('/v1/users', accessToken)).status).toBe(200);
    const { stdout } = await run(process.execPath, [TOKEN_CLI, 'revoke', sessionId], { env: cliEnv() });
    expect(stdout).toContain(`Revoked session ${sessionId}.`);
    const { rows } = await system.sql.query('SELECT expires_at FROM identity.sessions WHERE id = $1', [sessionId]);
    expect(rows[0].expires_at).toBeNull();

    const response = await pollAnswer(() => get('/v1/users', accessToken), (r) => r.status !== 200);
    expectError(response, 401, 'expired_access_token');
    expect(response.body.message).toBe('Access token has been revoked.');
    expectError(await verify(accessToken), 401, 'expired_access_token');
  });

  it('`npm run token -- revoke` with an unknown session says so and exits 1', async () => {
    const unknown = randomUUID();
    const failure = await run(process.execPath, [TOKEN_CLI, 'revoke', unknown], { env: cliEnv() }).then(
      () => null,
      (error: { code: number; stdout: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toContain(`No active session ${unknown}.`);
  });

  it('revoked by revokeSession → 401 expired_access_token, and other sessions keep working', async () => {
    const revoked = await authorize();
    const kept = await authorize();
    expect((await get('/v1/users', revoked.accessToken)).status).toBe(200);
    const { ctx, close } = await createIdentityContext(loadIdentityConfig(system.env), createLogger('test', 'silent'));
    try {
      expect(await revokeSession(ctx, revoked.sessionId)).toBe(true);
      // Revoking again changes nothing.
      expect(await revokeSession(ctx, revoked.sessionId)).toBe(false);
    } finally {
      await close();
    }
    const response = await pollAnswer(() => get('/v1/users', revoked.accessToken), (r) => r.status !== 200);
    expectError(response, 401, 'expired_access_token');
    expect((await get('/v1/users', kept.accessToken)).status).toBe(200);
  });

  it('revoked all at once with revokeApplicationSessions → 401 expired_access_token, other applications unaffected', async () => {
    const victim = await createApplication(system, 'victim');
    const first = await authorize(victim);
    const second = await authorize(victim);
    const bystander = await authorize(other);
    for (const { accessToken } of [first, second, bystander]) expect((await get('/v1/users', accessToken)).status).toBe(200);

    const { ctx, close } = await createIdentityContext(loadIdentityConfig(system.env), createLogger('test', 'silent'));
    try {
      expect(await revokeApplicationSessions(ctx, victim.id)).toBe(2);
      // A second call finds nothing left to revoke.
      expect(await revokeApplicationSessions(ctx, victim.id)).toBe(0);
    } finally {
      await close();
    }
    for (const { accessToken } of [first, second]) {
      const response = await pollAnswer(() => get('/v1/users', accessToken), (r) => r.status !== 200);
      expectError(response, 401, 'expired_access_token');
    }
    expect((await get('/v1/users', bystander.accessToken)).status).toBe(200);
    // The application's server tokens are not access tokens and keep working.
    expect((await get('/v1/users', await serverToken(victim.id, victim.secret))).status).toBe(200);
  });

  it('after its application is deleted → 401 invalid_access_token (its session row is gone)', async () => {
    // The gateway checks the session before the application; deleting the application deletes
    // its sessions (cascade), so the token names a session that no longer exists.
    const doomed = await createApplication(system, 'doomed');
    const { accessToken, sessionId } = await authorize(doomed);
    expect((await get('/v1/users', accessToken)).status).toBe(200);
    const deleted = await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret });
    expect(deleted.status).toBe(200);
    const { rows } = await system.sql.query('SELECT 1 FROM identity.sessions WHERE id = $1', [sessionId]);
    expect(rows).toHaveLength(0);

    const response = await pollAnswer(() => get('/v1/users', accessToken), (r) => r.status !== 200);
    expectError(response, 401, 'invalid_access_token');
    expectError(await verify(accessToken), 401, 'invalid_access_token');
  });
});
