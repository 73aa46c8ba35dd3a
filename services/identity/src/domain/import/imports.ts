/**
 * Starting an import of a customer dump and reporting on it: the dump is stored whole (refused,
 * with nothing written, unless it ends with COMMIT;), then its job is queued; its record tells
 * progress, counts per entity, what was skipped and why, conflicts, and the outcome.
 */
import type { Readable } from 'node:stream';
import { ENQUEUE_TIMEOUT_MS, type importView as importAnswer, type Producer, type ViewAnswer } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { ImportRecordRow } from '../../entities/index.js';
import { importsRepository } from '../../repositories/imports.repository.js';
import { storeDump, type FileBlobs } from './dump-store.js';

export interface ImportsContext {
  db: DataSource;
  queue: Producer<'identity-import'>;
}

/**
 * Stores the dump (IncompleteDumpError, with nothing stored, unless it is whole) and queues its
 * import. Should Redis not take the job, the request fails (503) and the stored import waits for
 * the identity worker, which queues every unfinished import again.
 */
export async function startImport(
  deps: ImportsContext,
  input: Readable,
  options: { customerId: string; overwrite: boolean; requestId: string; files?: FileBlobs },
): Promise<string> {
  const importId = await storeDump(deps.db, input, options);
  await deps.queue.add(
    'import.run',
    { customerId: options.customerId, importId, requestId: options.requestId },
    { jobId: importId },
    { timeoutMs: ENQUEUE_TIMEOUT_MS },
  );
  return importId;
}

/** What GET /v1/customer/imports/<importID> and `npm run import` show of an import. */
export function importView(record: ImportRecordRow): ViewAnswer<typeof importAnswer> {
  const dumpBytes = Number(record.dumpBytes);
  return {
    importID: record.id,
    status: record.state,
    progress: {
      bytesRead: Number(record.bytesRead),
      dumpBytes,
      fraction: dumpBytes === 0 ? 0 : Math.min(1, Number(record.bytesRead) / dumpBytes),
    },
    counts: record.counts,
    // Keyed by table (and reason, when a table's rows are skipped for several); listed by table.
    skipped: Object.entries(record.skipped)
      .map(([key, value]) => ({ table: key.split(':')[0], rows: value.rows, reason: value.reason }))
      .sort((a, b) => a.table.localeCompare(b.table) || a.reason.localeCompare(b.reason)),
    conflicts: record.conflicts,
    error: record.error,
    createdTimestamp: record.createdAt.toISOString(),
    startedTimestamp: record.startedAt?.toISOString() ?? null,
    finishedTimestamp: record.finishedAt?.toISOString() ?? null,
  };
}

export type ImportView = ReturnType<typeof importView>;

export async function findImport(db: DataSource, importId: string): Promise<ImportView | null> {
  const record = await importsRepository.find(db, importId);
  return record ? importView(record) : null;
}

/** An import of this customer's (another customer's is not found). */
export async function findImportOfCustomer(db: DataSource, customerId: string, importId: string): Promise<ImportView | null> {
  const record = await importsRepository.findOfCustomer(db, customerId, importId);
  return record ? importView(record) : null;
}
