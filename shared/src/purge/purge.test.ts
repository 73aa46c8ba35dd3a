/** A purge job drains a service's tables in order, at one pace over them all (PURGE_ROWS_PER_SECOND). */
import type { Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../logger.js';
import { definePurge } from './purge.js';

/** A table whose batches remove these many rows, one after the other, recording the limits asked. */
function table(name: string, batches: number[], batchDivisor?: number) {
  const limits: number[] = [];
  return {
    limits,
    table: {
      name,
      table: `test.${name}`,
      key: 'id',
      batchDivisor,
      deleteMarked: async (_db: unknown, _applicationId: string, limit: number) => {
        limits.push(limit);
        return batches[limits.length - 1];
      },
    },
  };
}

describe('a marked.purge job', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('paces the rows of all its tables together and gives rows with bytes smaller batches', async () => {
    const messages = table('messages', [500, 500, 0]);
    const files = table('files', [200, 0], 100);
    const purge = definePurge({ schema: 'test', mark: { user: async () => undefined }, tables: [messages.table, files.table] });
    // The only statement left to the database here is the purge's lock.
    const db = { query: async () => [] } as unknown as DataSource;
    const log = { info: () => undefined } as unknown as Logger;
    const handlers = purge.jobs(db, { batchSize: 1000, rowsPerSecond: 1000 });
    let result: unknown;
    void handlers['marked.purge']({ applicationId: 'app', requestId: 'r' }, {} as Job, log).then((value) => (result = value));

    // 500 rows at 1000 rows/s: the next batch at 0.5 s; 1000 rows: the files' first at 1 s.
    await vi.advanceTimersByTimeAsync(499);
    expect(messages.limits).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(messages.limits).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(499);
    expect(files.limits).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(files.limits).toHaveLength(1);
    // 1200 rows: the files' last (empty) batch at 1.2 s.
    await vi.advanceTimersByTimeAsync(200);
    expect({ result, messages: messages.limits, files: files.limits }).toEqual({
      result: { messages: 1000, files: 200 },
      messages: [1000, 1000, 1000],
      files: [10, 10],
    });
  });
});
