/**
 * Runs one import of a customer dump (the identity-import job): reads the stored dump twice as a
 * stream (first only the thread locations of `pages`, which the dump puts after the threads, then
 * everything), in batches of rows, and hands each batch to its table's step (import-steps.ts):
 * identity writes its own tables, conversation, notification and webhooks get theirs through their
 * internal import endpoints. The dump's internal UUIDs are mapped to this server's ids as rows are
 * imported (identity.import_mappings), so that later tables can name them and a resumed run passes
 * over the tables already done. Every write keeps what is stored unless the import overwrites, so
 * a second run, or a run after a crash, ends in the same state as one clean run.
 */
import { IMPORT_BATCH_ROWS, readDump } from '@collab/shared';
import type { ImportRecordRow } from '../../entities/index.js';
import { importsRepository } from '../../repositories/imports.repository.js';
import { dumpLines } from './dump-store.js';
import { IMPORTED_TABLES, json, skipReason, withMissingAsNull, type DumpRow } from './dump-tables.js';
import { ImportState, type ImportDeps } from './import-state.js';
import { IMPORT_STEPS } from './import-steps.js';

export type { ImportDeps } from './import-state.js';

/** Where the pages table begins, whether the dump copies into a temporary table first or not. */
const PAGES_MARKERS = ['COPY "tmp_pages" ', 'COPY "pages" '];
/** How often progress is written while a table is read. */
const PROGRESS_EVERY_MS = 1000;
/**
 * Batches of one table handed on at once: while the service writes one, PostgreSQL can write the
 * other on the second core. Their rows are distinct, and what they both update (a thread's last
 * activity) is locked in a fixed order, so they cannot deadlock.
 */
export const WRITES_IN_FLIGHT = 2;
/** Tables whose rows are checked and written one by one, each depending on those before it. */
const ONE_BATCH_AT_A_TIME = new Set(['customers', 'applications']);

export class ImportRun {
  private readonly state: ImportState;
  private bytesRead = 0;
  private lastProgress = 0;

  constructor(
    private readonly deps: ImportDeps,
    private readonly record: ImportRecordRow,
    requestId: string,
  ) {
    this.state = new ImportState(deps, record, requestId);
  }

  async execute(): Promise<void> {
    const { state } = this;
    // Only the part of the dump from the pages table on is read for them.
    for await (const event of readDump(dumpLines(this.deps.db, this.record.id, undefined, PAGES_MARKERS), new Set(['pages'])))
      if (event.kind === 'row') state.pages.set(`${event.row.orgID}:${event.row.contextHash}`, json(event.row.contextData));

    const wanted = new Set([...IMPORTED_TABLES].filter((table) => !state.tablesDone.has(table) && table !== 'pages'));
    let batch: DumpRow[] = [];
    const progress = { bytes: 0 };
    // Batches handed on while the next one is read, a few of one table at a time; tables stay in
    // the dump's order (a later one names the rows of those before it), and all of a table's
    // batches are written before its end is recorded.
    const writes = new Writes();
    const limit = this.deps.writesInFlight ?? WRITES_IN_FLIGHT;
    for await (const event of readDump(dumpLines(this.deps.db, this.record.id, progress), wanted)) {
      this.bytesRead = progress.bytes;
      if (event.kind === 'row') {
        batch.push(withMissingAsNull(event.row));
        if (batch.length >= IMPORT_BATCH_ROWS) {
          await writes.below(ONE_BATCH_AT_A_TIME.has(event.table) ? 1 : limit);
          writes.add(this.flush(event.table, batch));
          batch = [];
          await this.saveProgress(false);
        }
        continue;
      }
      if (event.kind === 'table') continue;
      await writes.below(1);
      const reason = skipReason(event.table);
      if (reason !== null) {
        if (event.rows > 0) state.skipped[event.table] = { rows: event.rows, reason };
      } else if (event.table === 'pages') {
        // Read in the first pass and counted with the threads on them (see the threads step).
      } else if (wanted.has(event.table)) {
        await this.flush(event.table, batch);
        batch = [];
      }
      await state.remembered();
      state.tablesDone.add(event.table);
      await this.saveProgress(true);
    }
    this.bytesRead = Number(this.record.dumpBytes);
    await this.saveProgress(true);
  }

  private async saveProgress(force: boolean) {
    if (!force && Date.now() - this.lastProgress < PROGRESS_EVERY_MS) return;
    this.lastProgress = Date.now();
    const { tablesDone, counts, skipped, conflicts } = this.state;
    await importsRepository.progress(this.deps.db, this.record.id, { bytesRead: String(this.bytesRead), tablesDone: [...tablesDone], counts, skipped, conflicts });
  }

  private async flush(table: string, rows: DumpRow[]): Promise<void> {
    if (rows.length === 0) return;
    if (!Object.hasOwn(IMPORT_STEPS, table)) throw new Error(`no importer for table ${table}`);
    await IMPORT_STEPS[table as keyof typeof IMPORT_STEPS](this.state, rows);
  }
}

/** The batches being written; a failure is reported once the others have ended too. */
class Writes {
  private readonly pending: Promise<void>[] = [];

  add(write: Promise<void>) {
    // Awaited in `below`; a failure must not go unhandled meanwhile.
    write.catch(() => undefined);
    this.pending.push(write);
  }

  /** Waits, oldest first, until fewer than `count` batches are being written. */
  async below(count: number) {
    while (this.pending.length >= count) {
      const oldest = this.pending.shift()!;
      try {
        await oldest;
      } catch (error) {
        await Promise.allSettled(this.pending.splice(0));
        throw error;
      }
    }
  }
}
