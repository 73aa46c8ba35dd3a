/**
 * The decided retry rule of webhook deliveries, on its own (test systems run it with shortened
 * delays): which answers are retried, the schedule with its jitter, Retry-After, and the window.
 */
import { describe, expect, it } from 'vitest';
import { outcomeOf, RETRY_SCHEDULE, retryDelayMs } from '../../services/webhooks/src/domain/deliveries/attempts.js';
import { retryAfterMs } from '../../services/webhooks/src/domain/deliveries/poster.js';

const DAY = 24 * 3600 * 1000;
const answered = (statusCode: number, retryAfter: number | null = null) =>
  ({ kind: 'answered', statusCode, retryAfterMs: retryAfter, responseBody: '' }) as const;

describe('webhook retries', () => {
  it('follow about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h, within ±20 %', () => {
    const expected = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 7_200_000];
    expected.forEach((base, index) => {
      expect(retryDelayMs(index + 1, RETRY_SCHEDULE, () => 0)).toBe(base * 0.8);
      expect(retryDelayMs(index + 1, RETRY_SCHEDULE, () => 1)).toBe(base * 1.2);
    });
  });

  it('succeed on any 2xx, retry network errors, 408, 429 and 5xx, and give up on other 4xx', () => {
    const now = Date.now();
    const created = new Date(now);
    expect(outcomeOf(answered(204), 1, created, DAY, RETRY_SCHEDULE, now)).toEqual({ status: 'succeeded', nextAttemptAt: null });
    for (const answer of [answered(408), answered(429), answered(500), answered(503), { kind: 'failed', error: 'refused' } as const])
      expect(outcomeOf(answer, 1, created, DAY, RETRY_SCHEDULE, now).status).toBe('pending');
    for (const code of [400, 401, 404, 410, 301])
      expect(outcomeOf(answered(code), 1, created, DAY, RETRY_SCHEDULE, now)).toEqual({ status: 'failed', nextAttemptAt: null });
  });

  it('honour a Retry-After of up to an hour, and use the schedule beyond', () => {
    const now = Date.now();
    const created = new Date(now);
    expect(outcomeOf(answered(429, 120_000), 1, created, DAY, RETRY_SCHEDULE, now).nextAttemptAt).toEqual(new Date(now + 120_000));
    const late = outcomeOf(answered(503, 2 * 3_600_000), 1, created, DAY, RETRY_SCHEDULE, now).nextAttemptAt!.getTime() - now;
    expect(late).toBeGreaterThanOrEqual(4_000);
    expect(late).toBeLessThanOrEqual(6_000);
    expect(retryAfterMs('120')).toBe(120_000);
    expect(retryAfterMs(new Date(now + 60_000).toUTCString(), now)).toBeGreaterThan(58_000);
    expect(retryAfterMs('soon')).toBeNull();
  });

  it('end, failed, once the next attempt would fall outside the window after the event', () => {
    const now = Date.now();
    const created = new Date(now - DAY + 1_000);
    expect(outcomeOf(answered(500), 3, created, DAY, RETRY_SCHEDULE, now)).toEqual({ status: 'failed', nextAttemptAt: null });
    expect(outcomeOf(answered(500), 1, new Date(now), DAY, RETRY_SCHEDULE, now).status).toBe('pending');
  });
});
