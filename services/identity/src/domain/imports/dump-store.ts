/**
 * A dump to import is stored in PostgreSQL (identity.import_chunks, 1 MiB each) before its job is
 * queued: any worker replica can then read it, again after a crash, and the request or command that
 * brought it can end. It is stored only whole: the chunks are written in one transaction that
 * commits only when the dump ended with `COMMIT;` (the original's sign of a complete dump), so a
 * truncated dump leaves nothing behind.
 */
import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { dumpCompleteness } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { importsRepository } from '../../repositories/imports.repository.js';

export const CHUNK_BYTES = 1024 * 1024;

/** Feeds the lines of a byte stream, across chunk boundaries, to `onLine`; `end` passes the last one. */
function lineSplitter(onLine: (line: string) => void) {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  const take = (text: string) => {
    const lines = (rest + text).split('\n');
    rest = lines.pop()!;
    for (const line of lines) onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  };
  return {
    write: (bytes: Buffer) => take(decoder.write(bytes)),
    end() {
      take(decoder.end());
      if (rest !== '') onLine(rest);
      rest = '';
    },
  };
}

/**
 * Stores the dump read from `input` as a new import of `customerId` and answers its id; throws
 * IncompleteDumpError (and stores nothing) unless the dump is whole.
 */
export async function storeDump(db: DataSource, input: Readable, options: { customerId: string; overwrite: boolean }): Promise<string> {
  const importId = randomUUID();
  await db.transaction(async (tx) => {
    await importsRepository.create(tx, { id: importId, customerId: options.customerId, overwrite: options.overwrite });
    const completeness = dumpCompleteness();
    const lines = lineSplitter((line) => completeness.line(line));
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let seq = 0;
    const store = async (bytes: Buffer) => importsRepository.addChunk(tx, importId, seq++, bytes);
    for await (const piece of input) {
      const bytes = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as string);
      lines.write(bytes);
      pending.push(bytes);
      pendingBytes += bytes.length;
      while (pendingBytes >= CHUNK_BYTES) {
        const all = Buffer.concat(pending);
        await store(all.subarray(0, CHUNK_BYTES));
        pending = [all.subarray(CHUNK_BYTES)];
        pendingBytes = pending[0].length;
      }
    }
    if (pendingBytes > 0) await store(Buffer.concat(pending));
    lines.end();
    completeness.finish();
  });
  return importId;
}

/**
 * The lines of a stored dump, one chunk in memory at a time. `progress.bytes` follows how much has
 * been read, for the import's progress.
 */
export async function* dumpLines(db: DataSource, importId: string, progress: { bytes: number } = { bytes: 0 }): AsyncGenerator<string> {
  const queue: string[] = [];
  const lines = lineSplitter((line) => queue.push(line));
  for (let seq = 0; ; seq++) {
    const chunk = await importsRepository.chunk(db, importId, seq);
    if (!chunk) break;
    lines.write(chunk);
    progress.bytes += chunk.length;
    yield* queue.splice(0);
  }
  lines.end();
  yield* queue.splice(0);
}
