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
 * The lines of a stored dump, one chunk in memory at a time (the next one is fetched while the
 * lines of this one are read). `progress.bytes` follows how much has been read, for the import's
 * progress. With `from`, the lines before the first that starts with one of these markers are
 * passed over, and the chunks before the one holding it are not read at all.
 */
export async function* dumpLines(
  db: DataSource,
  importId: string,
  progress: { bytes: number } = { bytes: 0 },
  from?: readonly string[],
): AsyncGenerator<string> {
  let seq = 0;
  let seeking = false;
  // A chunk read from its middle begins with the end of a line: that piece is no line.
  let partial = false;
  if (from) {
    const found = await importsRepository.firstChunkWith(db, importId, from);
    if (found === null) return;
    // The marker may begin in the chunk before the one found.
    seq = Math.max(0, found - 1);
    seeking = true;
    partial = seq > 0;
  }
  const queue: string[] = [];
  const lines = lineSplitter((line) => {
    if (partial) partial = false;
    else if (!seeking || from!.some((marker) => line.startsWith(marker))) {
      seeking = false;
      queue.push(line);
    }
  });
  const fetch = (n: number) => {
    const next = importsRepository.chunk(db, importId, n);
    // Settled later by the loop; a reader that stops early must not leave a failure unhandled.
    next.catch(() => undefined);
    return next;
  };
  for (let next = fetch(seq); ; ) {
    const chunk = await next;
    if (!chunk) break;
    next = fetch(++seq);
    lines.write(chunk);
    progress.bytes += chunk.length;
    yield* queue.splice(0);
  }
  lines.end();
  yield* queue.splice(0);
}
