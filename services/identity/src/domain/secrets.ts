import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';

/** 64 lowercase hex characters, like the reference's secrets (behavior.md §4.6). */
export function generateSecret(): string {
  return createHash('sha256').update(randomUUID()).update(randomUUID()).digest('hex');
}

/** Compares secrets without leaking where they differ. */
export function secretsEqual(given: string, stored: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(stored).digest();
  return timingSafeEqual(a, b);
}
