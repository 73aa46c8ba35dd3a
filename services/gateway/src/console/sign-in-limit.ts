/**
 * Failed console sign-ins are limited per client address and per account (customer ID or operator
 * user name): after SIGN_IN_FAILURES failures within the window, sign-in answers 429 with
 * Retry-After until the window ends, right credentials or not, so guessing a secret is slow.
 */
import { ApiError, type RedisClient } from '@collab/shared';

export const SIGN_IN_FAILURES = 10;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

export function createSignInLimit(redis: RedisClient, prefix: string) {
  const keys = (address: string, account: string) => [
    `${prefix}:console:sign-in:address:${address}`,
    `${prefix}:console:sign-in:account:${account.toLowerCase()}`,
  ];
  return {
    /** Throws 429 when the address or the account has failed too often lately. */
    async check(address: string, account: string): Promise<void> {
      for (const key of keys(address, account)) {
        const failures = Number((await redis.get(key)) ?? 0);
        if (failures < SIGN_IN_FAILURES) continue;
        const ttl = await redis.ttl(key);
        const retryAfter = String(ttl > 0 ? ttl : SIGN_IN_WINDOW_SECONDS);
        throw new ApiError('rate_limited', `Too many failed sign-ins. Try again in ${retryAfter} seconds.`, {
          headers: { 'Retry-After': retryAfter },
        });
      }
    },
    async failed(address: string, account: string): Promise<void> {
      for (const key of keys(address, account)) {
        if ((await redis.incr(key)) === 1) await redis.expire(key, SIGN_IN_WINDOW_SECONDS);
      }
    },
  };
}

export type SignInLimit = ReturnType<typeof createSignInLimit>;
