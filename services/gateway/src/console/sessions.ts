/**
 * Console sessions, kept in Redis so that every gateway replica knows them. The browser holds only
 * the session's random id in an HttpOnly cookie; Redis holds who signed in (a customer's ID or the
 * operator) and the session's CSRF token, never a secret. A session ends at its expiry
 * (CONSOLE_SESSION_HOURS after sign-in) or at sign-out.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { RedisClient } from '@collab/shared';

export type ConsoleIdentity = { kind: 'customer'; customerId: string } | { kind: 'operator' };

export type ConsoleSession = ConsoleIdentity & { csrfToken: string; expiresAt: string };

export interface SessionStore {
  create(identity: ConsoleIdentity): Promise<{ id: string; session: ConsoleSession }>;
  get(id: string): Promise<ConsoleSession | null>;
  delete(id: string): Promise<void>;
  readonly ttlSeconds: number;
}

const token = () => randomBytes(32).toString('base64url');

export function createSessionStore(redis: RedisClient, prefix: string, hours: number): SessionStore {
  const ttlSeconds = Math.round(hours * 3600);
  // Keyed by a digest of the id: a read of Redis does not give away usable cookies.
  const key = (id: string) => `${prefix}:console:session:${createHash('sha256').update(id).digest('hex')}`;
  return {
    ttlSeconds,
    async create(identity) {
      const id = token();
      const session: ConsoleSession = {
        ...identity,
        csrfToken: token(),
        expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString(),
      };
      await redis.set(key(id), JSON.stringify(session), 'EX', ttlSeconds);
      return { id, session };
    },
    async get(id) {
      const stored = await redis.get(key(id));
      if (!stored) return null;
      const session = JSON.parse(stored) as ConsoleSession;
      return Date.parse(session.expiresAt) > Date.now() ? session : null;
    },
    async delete(id) {
      await redis.del(key(id));
    },
  };
}

/** Constant-time comparison of what a request gives (a CSRF token, a secret) with what it must be. */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (!given) return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
