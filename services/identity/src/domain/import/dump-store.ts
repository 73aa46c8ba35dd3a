/**
 * A dump to import is stored in PostgreSQL (identity.import_chunks, 1 MiB each) before its job is
 * queued: any worker replica can then read it, again after a crash, and the request or command that
 * brought it can end. It is stored only whole: the chunks are written in one transaction that
 * commits only when the dump ended with `COMMIT;` (the original's sign of a complete dump), so a
 * truncated dump leaves nothing behind.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { dumpCompleteness, isUuid, linesOf, readDump } from '@collab/shared';
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
 * Cuts a byte stream into chunks of CHUNK_BYTES (the last one shorter) and hands each to `store`,
 * in order, one in memory at a time; `seen` gets every piece as it is read. Answers the number of
 * chunks.
 */
async function storeChunked(input: Readable, store: (seq: number, bytes: Buffer) => Promise<void>, seen?: (bytes: Buffer) => void): Promise<number> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let seq = 0;
  for await (const piece of input) {
    const bytes = Buffer.isBuffer(piece) ? piece : Buffer.from(piece as string);
    seen?.(bytes);
    pending.push(bytes);
    pendingBytes += bytes.length;
    while (pendingBytes >= CHUNK_BYTES) {
      const all = Buffer.concat(pending);
      await store(seq++, all.subarray(0, CHUNK_BYTES));
      pending = [all.subarray(CHUNK_BYTES)];
      pendingBytes = pending[0].length;
    }
  }
  if (pendingBytes > 0) await store(seq++, Buffer.concat(pending));
  return seq;
}

/**
 * The blobs of the dump's files, given with it: called once the dump is stored, in the same
 * transaction; `store` keeps the bytes of one file (by the dump's file id).
 */
export type FileBlobs = (store: (fileId: string, blob: Readable) => Promise<void>) => Promise<void>;

/**
 * The blobs of the dump at `dumpPath` in `dir`, as the original's file bucket downloads: the bytes
 * of each of its `files` rows in `dir/<files.id>`, streamed one at a time. Files with no blob
 * there are passed over (the import reports them as failed uploads).
 */
export function blobsInDirectory(dumpPath: string, dir: string): FileBlobs {
  return async (store) => {
    for await (const event of readDump(linesOf(createReadStream(dumpPath)), new Set(['files']))) {
      const id = event.kind === 'row' ? event.row.id : null;
      if (!id || !isUuid(id)) continue;
      const blob = join(dir, id);
      if (await stat(blob).then((found) => found.isFile(), () => false)) await store(id.toLowerCase(), createReadStream(blob));
    }
  };
}

/**
 * Stores the dump read from `input` (and the blobs of its files, when given) as a new import of
 * `customerId` and answers its id; throws IncompleteDumpError (and stores nothing) unless the
 * dump is whole.
 */
export async function storeDump(db: DataSource, input: Readable, options: { customerId: string; overwrite: boolean; files?: FileBlobs }): Promise<string> {
  const importId = randomUUID();
  await db.transaction(async (tx) => {
    await importsRepository.create(tx, { id: importId, customerId: options.customerId, overwrite: options.overwrite, withFiles: Boolean(options.files) });
    const completeness = dumpCompleteness();
    const lines = lineSplitter((line) => completeness.line(line));
    await storeChunked(input, (seq, bytes) => importsRepository.addChunk(tx, importId, seq, bytes), (bytes) => lines.write(bytes));
    lines.end();
    completeness.finish();
    await options.files?.(async (fileId, blob) => {
      const chunks = await storeChunked(blob, (seq, bytes) => importsRepository.addFileChunk(tx, importId, fileId, seq, bytes));
      // An empty file is given too: one empty chunk says so.
      if (chunks === 0) await importsRepository.addFileChunk(tx, importId, fileId, 0, Buffer.alloc(0));
    });
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
