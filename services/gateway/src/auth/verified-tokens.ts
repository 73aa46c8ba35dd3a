/**
 * Tokens the gateway has verified lately, so that a client sending the same token again costs a
 * map lookup instead of two HMACs and a JWT decode. An entry says what verified the token (the
 * caller it names and the secret whose signature matched) and lasts until the first moment its
 * time claims could fail (`exp`, the 24 h `iat` age, both with the clock tolerance). Each hit is
 * still checked against the credentials of the moment: an application's or customer's secret that
 * changed (rotation, the end of a grace period) drops the entry, and an access token's session is
 * looked up as before, so revocation, deletion and rotation act exactly as without the cache.
 */
import { TOKEN_CLOCK_TOLERANCE_SECONDS, TOKEN_MAX_AGE_SECONDS } from '@collab/shared';

export type VerifiedToken =
  | { kind: 'access'; sessionId: string; validUntil: number }
  | { kind: 'app'; applicationId: string; secret: string; validUntil: number }
  | { kind: 'customer'; customerId: string; secret: string; validUntil: number };

/** Bounds the memory: 2,000 tokens of at most 1 KB each (a server token is ~200 characters). */
export const VERIFIED_TOKENS_MAX_ENTRIES = 2000;
export const VERIFIED_TOKENS_MAX_TOKEN_LENGTH = 1024;

/** A bounded LRU of verified tokens, keyed by the token itself. */
export class VerifiedTokens {
  private readonly entries = new Map<string, VerifiedToken>();

  constructor(private readonly maxEntries = VERIFIED_TOKENS_MAX_ENTRIES) {}

  get size(): number {
    return this.entries.size;
  }

  get(token: string, now = Date.now()): VerifiedToken | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    this.entries.delete(token);
    if (entry.validUntil <= now) return undefined;
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    this.entries.set(token, entry);
    return entry;
  }

  set(token: string, entry: VerifiedToken, now = Date.now()): void {
    if (token.length > VERIFIED_TOKENS_MAX_TOKEN_LENGTH || entry.validUntil <= now) return;
    this.entries.delete(token);
    this.entries.set(token, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  delete(token: string): void {
    this.entries.delete(token);
  }
}

/**
 * Until when a token that passed verifySignedToken now certainly passes it again: it checks
 * `exp > now - tolerance` and `now - iat - tolerance <= 24 h` with `now` in whole seconds, so the
 * first refused millisecond is the earlier of these two. A `nbf` that passed once passes later too.
 */
export function signedTokenValidUntil(claims: Record<string, unknown>): number {
  const { iat, exp } = claims;
  // Without a numeric `iat` the token was not accepted; nothing to cache then.
  if (typeof iat !== 'number') return 0;
  const tolerance = TOKEN_CLOCK_TOLERANCE_SECONDS;
  const byAge = (Math.floor(iat + TOKEN_MAX_AGE_SECONDS + tolerance) + 1) * 1000;
  return typeof exp === 'number' ? Math.min(byAge, Math.ceil(exp + tolerance) * 1000) : byAge;
}
