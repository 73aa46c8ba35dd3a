/** The wait before an outbox entry's next run after a failure. */
import { describe, expect, it } from 'vitest';
import { outboxRetryDelayMs } from './outbox.js';

describe('outboxRetryDelayMs', () => {
  it('starts at a second, doubles after each failure, and stops growing at five minutes', () => {
    expect([1, 2, 3, 4, 8, 9, 10, 50].map(outboxRetryDelayMs)).toEqual([1000, 2000, 4000, 8000, 128_000, 256_000, 300_000, 300_000]);
  });
});
