/**
 * The synchronous fast path of the token checks never changes an outcome: for generated tokens
 * around every boundary (iat age, exp, nbf, clock tolerance, wrong secret, tampered or re-encoded
 * signatures, odd headers and payloads), verifySignedToken accepts exactly what jose's jwtVerify
 * accepts, and accessTokenSession treats as an access token exactly what jose's compactVerify
 * verifies with the access secret. The clock is frozen so that boundaries are exact.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { compactVerify, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../errors.js';
import { accessTokenSession, TOKEN_CLOCK_TOLERANCE_SECONDS, TOKEN_MAX_AGE_SECONDS, verifySignedToken, verifySignedTokenWithAny } from './tokens.js';

const NOW = 1_800_000_000;
const SECRET = 'the-application-secret-0123456789';
const OTHER_SECRET = 'another-secret-0123456789abcdef';
const SESSION_ID = '2b0c5f8e-2d4c-4a57-9d38-58a4c0b3a1f1';
const b64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const key = (secret: string) => new TextEncoder().encode(secret);

/** Seconds around each boundary the checks have, relative to now. */
const T = TOKEN_CLOCK_TOLERANCE_SECONDS;
const AROUND = [0, 1, -1, T, T + 1, -T, -T - 1, -TOKEN_MAX_AGE_SECONDS - T, -TOKEN_MAX_AGE_SECONDS - T - 1, -TOKEN_MAX_AGE_SECONDS - T + 1];
const time = fc.oneof(
  fc.constantFrom(...AROUND).map((offset) => NOW + offset),
  fc.integer({ min: -2 * TOKEN_MAX_AGE_SECONDS, max: TOKEN_MAX_AGE_SECONDS }).map((offset) => NOW + offset),
);
const claimValue = fc.oneof({ weight: 6, arbitrary: time }, fc.constant(null), fc.constant('1800000000'), fc.double());
const claims = fc.record(
  { iat: claimValue, exp: claimValue, nbf: claimValue, session_id: fc.constant(SESSION_ID), app_id: fc.uuid() },
  { requiredKeys: [] },
);
/** Headers checkHeader lets through (HS512, nothing but alg and typ), then ones it refuses before any signature check. */
const PLAIN_HEADERS = ['{"alg":"HS512"}', '{"alg":"HS512","typ":"JWT"}', '{ "typ": "JWT", "alg": "HS512" }'];
const header = fc.constantFrom(...PLAIN_HEADERS, '{"alg":"HS256"}', '{"alg":"HS512","kid":"1"}', '[]', 'not json');
const payloadText = fc.oneof({ weight: 8, arbitrary: claims.map((value) => JSON.stringify(value)) }, fc.constantFrom('[1]', 'null', '"text"', '{', '{"iat":1e400}', `{"iat":${NOW},"exp":-1e400}`));
/** What is done to a correctly signed token: nothing, or one of the ways to break or re-encode it. */
const tampering = fc.constantFrom('none', 'none', 'none', 'other secret', 'flip first', 'padding bits', 'truncate', 'extra char', 'padding', 'segments');

function sign(headerText: string, payload: string, secret: string): string {
  const input = `${b64url(headerText)}.${b64url(payload)}`;
  return `${input}.${createHmac('sha512', secret).update(input).digest('base64url')}`;
}

function tamper(token: string, how: string): string {
  const [h, p, s] = token.split('.') as [string, string, string];
  const last = s.at(-1)!;
  switch (how) {
    case 'flip first':
      return `${h}.${p}.${s[0] === 'A' ? 'B' : 'A'}${s.slice(1)}`;
    case 'padding bits': {
      // The last character carries 2 bits of the signature and 4 unused ones: another encoding of the same bytes.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      return `${h}.${p}.${s.slice(0, -1)}${alphabet[alphabet.indexOf(last) ^ 1]}`;
    }
    case 'truncate':
      return `${h}.${p}.${s.slice(0, -2)}`;
    case 'extra char':
      return `${h}.${p}.${s}A`;
    case 'padding':
      return `${h}.${p}=.${s}`;
    case 'segments':
      return `${h}.${p}.${s}.`;
    default:
      return token;
  }
}

const tokens = fc.record({ header, payload: payloadText, tampering }).map(({ header: h, payload, tampering: how }) => ({
  token: tamper(sign(h, payload, how === 'other secret' ? OTHER_SECRET : SECRET), how),
  plainHeader: PLAIN_HEADERS.includes(h),
}));

async function accepted(check: () => Promise<unknown>): Promise<boolean> {
  try {
    await check();
    return true;
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    return false;
  }
}

const OPTIONS = { algorithms: ['HS512'], maxTokenAge: TOKEN_MAX_AGE_SECONDS, clockTolerance: TOKEN_CLOCK_TOLERANCE_SECONDS };

describe('token checks (fast path against jose)', () => {
  beforeAll(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(NOW * 1000);
  });
  afterAll(() => {
    vi.useRealTimers();
  });

  it('verifySignedToken accepts exactly what jwtVerify accepts', async () => {
    await fc.assert(
      fc.asyncProperty(tokens, async ({ token, plainHeader }) => {
        const ours = await accepted(() => verifySignedToken(token, SECRET, 'invalid_app_token'));
        const reference = plainHeader && (await accepted(() => jwtVerify(token, key(SECRET), OPTIONS)));
        expect(ours).toBe(reference);
      }),
      { numRuns: 2000 },
    );
  });

  it('accessTokenSession takes a token for an access token exactly when compactVerify verifies it', async () => {
    await fc.assert(
      fc.asyncProperty(tokens, async ({ token }) => {
        let ours: boolean;
        try {
          ours = (await accessTokenSession(token, SECRET, NOW * 1000)) !== null;
        } catch (error) {
          // Refused as an access token (no session_id, expired): it was taken for one.
          expect(error).toBeInstanceOf(ApiError);
          ours = true;
        }
        expect(ours).toBe(await accepted(() => compactVerify(token, key(SECRET), { algorithms: ['HS512'] })));
      }),
      { numRuns: 2000 },
    );
  });

  it('accepts a plain valid token and refuses it expired, too old, or signed with another secret', async () => {
    const valid = sign('{"alg":"HS512","typ":"JWT"}', JSON.stringify({ app_id: SESSION_ID, iat: NOW, exp: NOW + 60 }), SECRET);
    await expect(verifySignedToken(valid, SECRET, 'invalid_app_token')).resolves.toBeUndefined();
    const refusals: [string, string][] = [
      [sign('{"alg":"HS512"}', JSON.stringify({ iat: NOW - 60, exp: NOW - T }), SECRET), 'TokenExpiredError: jwt expired'],
      [sign('{"alg":"HS512"}', JSON.stringify({ iat: NOW - TOKEN_MAX_AGE_SECONDS - T - 1 }), SECRET), 'TokenExpiredError: maxAge exceeded'],
      [sign('{"alg":"HS512"}', JSON.stringify({ iat: NOW }), OTHER_SECRET), 'JsonWebTokenError: invalid signature'],
    ];
    for (const [token, message] of refusals)
      await expect(verifySignedToken(token, SECRET, 'invalid_app_token')).rejects.toMatchObject({ code: 'invalid_app_token', message });
  });

  it('verifySignedTokenWithAny (a rotated secret’s grace): accepts a token signed with any of the secrets and names which, refuses one signed with none', async () => {
    const payload = JSON.stringify({ iat: NOW });
    const [current, previous, stranger] = [SECRET, OTHER_SECRET, 'a-third-secret-0123456789abcdef'];
    for (const secret of [current, previous])
      await expect(verifySignedTokenWithAny(sign('{"alg":"HS512"}', payload, secret), [current, previous], 'invalid_app_token')).resolves.toBe(secret);
    await expect(verifySignedTokenWithAny(sign('{"alg":"HS512"}', payload, previous), [current], 'invalid_app_token')).rejects.toMatchObject({
      code: 'invalid_app_token',
      message: 'JsonWebTokenError: invalid signature',
    });
    await expect(verifySignedTokenWithAny(sign('{"alg":"HS512"}', payload, stranger), [current, previous], 'invalid_app_token')).rejects.toMatchObject({
      code: 'invalid_app_token',
      message: 'JsonWebTokenError: invalid signature',
    });
    // Only a signature that does not match tries the next secret: an expired token signed with the current one is expired.
    const expired = sign('{"alg":"HS512"}', JSON.stringify({ iat: NOW - 60, exp: NOW - T }), current);
    await expect(verifySignedTokenWithAny(expired, [current, previous], 'invalid_app_token')).rejects.toMatchObject({ message: 'TokenExpiredError: jwt expired' });
    const expiredPrevious = sign('{"alg":"HS512"}', JSON.stringify({ iat: NOW - 60, exp: NOW - T }), previous);
    await expect(verifySignedTokenWithAny(expiredPrevious, [current, previous], 'invalid_app_token')).rejects.toMatchObject({
      message: 'TokenExpiredError: jwt expired',
    });
  });
});
