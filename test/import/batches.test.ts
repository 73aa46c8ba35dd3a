/**
 * A dump whose tables take several batches each: the worker writes more than one batch of a table
 * at once, into the same few threads, and still ends with every row imported once, every mapping
 * kept and each thread's last activity at its latest message.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeSyntheticDump } from '../../bench/src/scenarios/synthetic-dump.js';
import { systemWithImporter, type Importer } from '../support/imports.js';
import type { TestSystem } from '../support/system.js';

/** Batches of 1,000 messages, 2,200 to a thread (the dump lists a thread's messages together), so that batches written at once share threads. */
const SHAPE = { messages: 6600, threads: 3, users: 20, groups: 2 };

let system: TestSystem;
let importer: Importer;
let dir: string;

systemWithImporter(async (started) => {
  ({ system, importer } = started);
  dir = await mkdtemp(join(tmpdir(), 'import-batches-'));
}, { beforeStop: () => (dir ? rm(dir, { recursive: true, force: true }) : undefined), startTimeoutMs: 60_000 });

describe('a dump of many batches per table', () => {
  it('imports every row once, keeps every mapping and moves each thread to its latest message', async () => {
    const path = join(dir, 'dump.sql');
    const dump = await writeSyntheticDump(path, system.customer, SHAPE);
    const report = await importer.run(path, { customerId: system.customer.id });
    expect(report.status).toBe('completed');
    expect(report.counts.threads).toEqual({ imported: SHAPE.threads, existing: 0 });
    expect(report.counts.messages).toEqual({ imported: SHAPE.messages, existing: 0 });

    const { rows: stored } = await system.sql.query<{ messages: number; mapped: number }>(
      `SELECT (SELECT count(*)::int FROM conversation.messages WHERE application_id = $1) AS messages,
              (SELECT count(*)::int FROM identity.import_mappings WHERE customer_id = $2 AND kind = 'message') AS mapped`,
      [dump.applicationId, system.customer.id],
    );
    expect(stored[0]).toEqual({ messages: SHAPE.messages, mapped: SHAPE.messages });

    const { rows: behind } = await system.sql.query(
      `SELECT t.internal_id FROM conversation.threads t
       WHERE t.application_id = $1 AND t.last_activity_at <> (SELECT max(m.created_at) FROM conversation.messages m WHERE m.thread_id = t.internal_id)`,
      [dump.applicationId],
    );
    expect(behind).toEqual([]);
  });
});
