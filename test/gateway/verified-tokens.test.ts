/**
 * The gateway's cache of verified tokens: bounded, least recently used out first, an entry lasting
 * exactly as long as verifySignedToken would still accept its token, and every hit judged against
 * the credentials of the moment (a rotation that stops a secret stops its cached tokens too).
 * The token rules themselves run through the real gateway in tokens.test.ts and
 * application-secrets.test.ts, where tokens are sent again and so answered from this cache.
 */
import { createInternalClient, createLogger, createRedis, CredentialStore, TOKEN_MAX_AGE_SECONDS, verifySignedToken } from '@collab/shared';
import { until } from '@collab/shared/devkit';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createAuthenticator } from '../../services/gateway/src/auth/authenticate.js';
import { signedTokenValidUntil, VerifiedTokens, VERIFIED_TOKENS_MAX_TOKEN_LENGTH, type VerifiedToken } from '../../services/gateway/src/auth/verified-tokens.js';
import { asCustomer, createApplication, request, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

const entry = (applicationId: string, validUntil = Number.MAX_SAFE_INTEGER): VerifiedToken => ({ kind: 'app', applicationId, secret: 's', validUntil });

describe('VerifiedTokens', () => {
  it('keeps at most its bound, dropping the least recently used token first', () => {
    const cache = new VerifiedTokens(2);
    cache.set('a', entry('A'));
    cache.set('b', entry('B'));
    expect(cache.get('a')).toMatchObject({ applicationId: 'A' });
    cache.set('c', entry('C'));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toMatchObject({ applicationId: 'A' });
    expect(cache.get('c')).toMatchObject({ applicationId: 'C' });
  });

  it('answers an entry only before its end, and stores neither ended entries nor oversized tokens', () => {
    const cache = new VerifiedTokens();
    cache.set('t', entry('A', 1000), 0);
    expect(cache.get('t', 999)).toMatchObject({ applicationId: 'A' });
    expect(cache.get('t', 1000)).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.set('ended', entry('A', 1000), 1000);
    cache.set('x'.repeat(VERIFIED_TOKENS_MAX_TOKEN_LENGTH + 1), entry('A'), 0);
    expect(cache.size).toBe(0);
  });
});

describe('signedTokenValidUntil', () => {
  afterEach(() => vi.useRealTimers());
  const secret = 'a-secret-of-some-length-0123456789';
  const iat = 1_800_000_000;

  it('ends at the first millisecond verifySignedToken refuses the token, by exp or by iat age', async () => {
    for (const claims of [{ iat, exp: iat + 60 }, { iat }, { iat, exp: iat + 2 * TOKEN_MAX_AGE_SECONDS }, { iat: iat + 0.5, exp: iat + 60.25 }]) {
      const token = await serverToken('2b0c5f8e-2d4c-4a57-9d38-58a4c0b3a1f1', secret, { iat: claims.iat, exp: claims.exp });
      const end = signedTokenValidUntil(claims);
      expect(end).toBeGreaterThan(claims.iat * 1000);
      vi.useFakeTimers({ toFake: ['Date'], now: end - 1 });
      await expect(verifySignedToken(token, secret, 'invalid_app_token')).resolves.toBeUndefined();
      vi.setSystemTime(end);
      await expect(verifySignedToken(token, secret, 'invalid_app_token')).rejects.toMatchObject({ code: 'invalid_app_token' });
      vi.useRealTimers();
    }
    expect(signedTokenValidUntil({ exp: iat })).toBe(0);
  });
});

describe('the authenticator with its cache', () => {
  let system: TestSystem;
  let app: TestApplication;
  const subscriber: { quit?: () => Promise<unknown> } = {};
  systemWithApplication('verified tokens', (started) => ({ system, app } = started));
  afterAll(async () => void (await subscriber.quit?.()));

  async function authenticator() {
    const identity = createInternalClient({ baseUrl: system.serviceUrls.identity, internalToken: system.env.INTERNAL_TOKEN!, service: 'identity' });
    const credentials = new CredentialStore(identity, 60_000);
    const redis = createRedis(system.env.REDIS_URL!);
    subscriber.quit = () => redis.quit();
    await credentials.subscribe(redis, system.env.REDIS_PREFIX!, createLogger('test', 'silent'));
    const verified = new VerifiedTokens();
    return { verified, authenticate: createAuthenticator(credentials, system.env.ACCESS_TOKEN_SECRET!, identity, verified) };
  }

  it('answers a token again from the cache until a rotation stops the secret that signed it', async () => {
    const { verified, authenticate } = await authenticator();
    const token = await serverToken(app.id, app.secret);
    const caller = { applicationId: app.id };
    expect(await authenticate('app', `Bearer ${token}`, 'r1')).toEqual(caller);
    expect(verified.get(token)).toMatchObject({ kind: 'app', applicationId: app.id, secret: app.secret });
    expect(await authenticate('app', `Bearer ${token}`, 'r2')).toEqual(caller);

    // A token signed with a secret the application never had is refused and never cached.
    const stranger = await serverToken(app.id, 'not-the-secret-0123456789abcdefgh');
    await expect(authenticate('app', `Bearer ${stranger}`, 'r3')).rejects.toMatchObject({ code: 'invalid_app_token' });
    expect(verified.get(stranger)).toBeUndefined();

    // Rotated once: the previous secret is in its grace period, so the cached token still passes.
    expect((await asCustomer(system).post(`/v1/applications/${app.id}/secret`)).status).toBe(200);
    expect(await authenticate('app', `Bearer ${token}`, 'r4')).toEqual(caller);
    // Rotated again: the token's secret is no longer accepted, cached or not.
    expect((await asCustomer(system).post(`/v1/applications/${app.id}/secret`)).status).toBe(200);
    await until(
      () => authenticate('app', `Bearer ${token}`, 'r5').then(() => false, (error: { code?: string }) => error.code === 'invalid_app_token'),
      'the twice-rotated secret refused',
      10_000,
    );
    expect(verified.get(token)).toBeUndefined();
  });

  it('caches an access token by its session until its exp', async () => {
    const { verified, authenticate } = await authenticator();
    const other = await createApplication(system, 'verified access tokens');
    const signed = await serverToken(other.id, other.secret);
    const authorized = await request(system.url, 'POST', '/v1/authorize', { body: { signed_app_token: signed } });
    expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
    const accessToken: string = authorized.body.access_token;
    expect(await authenticate('app', `Bearer ${accessToken}`, 'r1')).toEqual({ applicationId: other.id });
    const entry = verified.get(accessToken);
    expect(entry).toMatchObject({ kind: 'access' });
    expect(entry!.validUntil).toBeGreaterThan(Date.now());
    expect(await authenticate('app', `Bearer ${accessToken}`, 'r2')).toEqual({ applicationId: other.id });
  });
});
