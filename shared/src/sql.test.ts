/** Purge pacing: batches are drained until none removes a row, and paused to keep the pace. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { drainBatches, purgePace } from './sql.js';

describe('drainBatches with purgePace', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('pauses after each batch until the pace allows the rows removed so far', async () => {
    const batches = [500, 500, 200, 0];
    let steps = 0;
    const draining = drainBatches(async () => batches[steps++], purgePace(1000));
    let total: number | undefined;
    void draining.then((value) => (total = value));

    // 500 rows at 1000 rows/s: the second batch waits until half a second has passed.
    await vi.advanceTimersByTimeAsync(0);
    expect(steps).toBe(1);
    await vi.advanceTimersByTimeAsync(499);
    expect(steps).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(steps).toBe(2);
    // 1000 rows: the third at one second.
    await vi.advanceTimersByTimeAsync(499);
    expect(steps).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(steps).toBe(3);
    // 1200 rows: the last (empty) batch at 1.2 s, and the total.
    await vi.advanceTimersByTimeAsync(200);
    expect(steps).toBe(4);
    expect(total).toBe(1200);
  });

  it('never pauses at a pace of 0', async () => {
    const batches = [1000, 1000, 0];
    let steps = 0;
    const total = await drainBatches(async () => batches[steps++], purgePace(0));
    expect({ steps, total }).toEqual({ steps: 3, total: 2000 });
  });
});
