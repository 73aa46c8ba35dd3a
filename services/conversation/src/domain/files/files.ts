/**
 * File uploads: multipart form data (`file`, `ownerID`, optional `name`) streamed
 * into Postgres in 1 MiB chunks inside one transaction, so a failed or refused upload leaves nothing.
 */
import { createHash, randomUUID, type Hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { ApiError, isUuid, type RecordWrite, type Queryable } from '@collab/shared';
import busboy from 'busboy';
import { filesRepository } from '../../repositories/files.repository.js';
import type { FileRef } from '../../entities/index.js';
import type { ConversationContext } from '../context.js';
import { isValidFileSignature } from './file-links.js';

const CHUNK_BYTES = 1024 * 1024;

interface UploadedPart {
  filename: string;
  mimeType: string;
  size: number;
  truncated: boolean;
}

/** Writes the stream as chunks of the file, hashing its bytes; returns what was written. */
async function storeChunks(db: Queryable, fileId: FileRef, stream: Readable, hash: Hash): Promise<{ size: number; truncated: boolean }> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let seq = 0;
  let size = 0;
  let truncated = false;
  stream.on('limit', () => {
    truncated = true;
  });
  const flush = async () => {
    if (pendingBytes === 0) return;
    await filesRepository.insertChunk(db, fileId, seq++, Buffer.concat(pending, pendingBytes));
    pending = [];
    pendingBytes = 0;
  };
  for await (const data of stream as AsyncIterable<Buffer>) {
    size += data.length;
    hash.update(data);
    pending.push(data);
    pendingBytes += data.length;
    if (pendingBytes >= CHUNK_BYTES) await flush();
  }
  await flush();
  return { size, truncated };
}

/**
 * What identifies an upload for an Idempotency-Key: its fields, and its file's name, type and
 * bytes. Not the raw body, whose multipart boundary a client draws anew for each attempt.
 */
function uploadFingerprint(fields: Record<string, string>, part: UploadedPart | null, fileHash: Hash): string {
  const file = part ? { name: part.filename, type: part.mimeType, sha256: fileHash.digest('hex') } : null;
  const sortedFields = Object.keys(fields)
    .sort()
    .map((name) => [name, fields[name]]);
  return createHash('sha256').update(JSON.stringify({ fields: sortedFields, file })).digest('hex');
}

function parseUpload(db: Queryable, fileId: FileRef, headers: IncomingHttpHeaders, body: Readable, maxBytes: number) {
  return new Promise<{ fields: Record<string, string>; part: UploadedPart | null; fingerprint: string }>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers,
        // Browsers and fetch send file names as raw UTF-8 bytes; busboy's default reads them as latin1.
        defParamCharset: 'utf8',
        // busboy reports a file that reaches `fileSize` as truncated, even when nothing follows:
        // one byte more lets a file of exactly `maxBytes` through and still catches every larger one.
        limits: { fileSize: maxBytes + 1, files: 1, fields: 10, fieldSize: 64 * 1024 },
      });
    } catch {
      reject(new ApiError('invalid_request', 'Expected a multipart/form-data body with a file.'));
      return;
    }
    const fields: Record<string, string> = {};
    let part: UploadedPart | null = null;
    let writing: Promise<unknown> = Promise.resolve();
    let failure: unknown = null;
    let settled = false;
    const fileHash = createHash('sha256');
    // Settles only once no chunk write is in flight, so the transaction never ends under a write.
    const settle = () => {
      if (settled) return;
      settled = true;
      writing.then(
        () => (failure ? reject(failure) : resolve({ fields, part, fingerprint: uploadFingerprint(fields, part, fileHash) })),
        (error: unknown) => reject(failure ?? error),
      );
    };
    const fail = (error: unknown) => {
      failure ??= error;
      settle();
    };
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || part) {
        stream.resume();
        return;
      }
      const current: UploadedPart = { filename: info.filename ?? 'file', mimeType: info.mimeType, size: 0, truncated: false };
      part = current;
      writing = storeChunks(db, fileId, stream, fileHash).then((result) => {
        current.size = result.size;
        current.truncated = result.truncated;
      });
      writing.catch((error: unknown) => {
        // Stop reading: nobody consumes the file stream any more.
        body.unpipe(parser);
        fail(error);
      });
    });
    parser.on('error', () => fail(new ApiError('invalid_request', 'The multipart body could not be read.')));
    parser.on('close', settle);
    // A client that goes away mid-upload: end the file stream (its writer then stops) and give up,
    // which rolls the transaction back and returns its connection to the pool.
    const interrupted = () => {
      if (body.readableEnded) return;
      failure ??= new ApiError('invalid_request', 'The upload was interrupted.');
      body.unpipe(parser);
      parser.destroy();
      settle();
    };
    body.once('error', interrupted);
    body.once('close', interrupted);
    body.pipe(parser);
  });
}

/**
 * Stores an uploaded file owned by `ownerID`; returns its id. `bodyFingerprint` gets what
 * identifies the upload once it is read, before anything else is checked.
 */
export async function uploadFile(
  ctx: ConversationContext,
  applicationId: string,
  request: { headers: IncomingHttpHeaders; body: Readable },
  options: { requestId: string; bodyFingerprint: (fingerprint: string) => void; recordWrite: RecordWrite<string> },
): Promise<string> {
  const { requestId } = options;
  if (!String(request.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data'))
    throw new ApiError('invalid_request', 'Expected a multipart/form-data body with a file.');
  const fileId = randomUUID();
  await ctx.db.transaction(async (tx) => {
    // The row exists first so that chunks can reference it; owner and size are set once known.
    const file = await filesRepository.insert(tx, { id: fileId, applicationId, ownerId: '', name: '', mimeType: '', size: '0' });
    const { fields, part, fingerprint } = await parseUpload(tx, file, request.headers, request.body, ctx.files.maxBytes);
    // A repeat of an upload already answered stops here (its chunks roll back).
    options.bodyFingerprint(fingerprint);
    const missing = [...(part ? [] : ['file']), ...(fields.ownerID ? [] : ['ownerID'])];
    if (missing.length > 0)
      throw new ApiError('missing_field', `Missing required field${missing.length > 1 ? 's' : ''}: ${missing.join(' and ')}.`);
    if (part!.truncated)
      throw new ApiError('payload_too_large', `The file is larger than ${ctx.files.maxBytes} bytes.`);
    const lookup = await ctx.identity.lookup(applicationId, { userIds: [fields.ownerID] }, requestId);
    if (!lookup.users.has(fields.ownerID)) throw new ApiError('user_not_found', `Platform user ${fields.ownerID} not found.`);
    await filesRepository.updateUploaded(tx, file, {
      ownerId: fields.ownerID,
      name: fields.name || part!.filename,
      mimeType: part!.mimeType || 'application/octet-stream',
      size: String(part!.size),
    });
    // The request's answer, stored with the file (Idempotency-Key).
    await options.recordWrite(tx, fileId);
  });
  return fileId;
}

/** A file behind a valid signed link, and a reader of its chunks. */
export async function openSignedFile(ctx: ConversationContext, fileId: string, expires: unknown, signature: unknown) {
  const notFound = new ApiError('not_found', 'No such file, or the link has expired.');
  if (!isUuid(fileId) || !isValidFileSignature(ctx.files.urlSecret, fileId, expires, signature)) throw notFound;
  const file = await filesRepository.findById(ctx.db, fileId.toLowerCase());
  // A failed upload (an imported file whose bytes were not given) has no bytes to serve.
  if (!file || file.uploadStatus !== 'uploaded') throw notFound;
  return {
    file,
    async *chunks(): AsyncGenerator<Buffer> {
      for (let seq = 0; ; seq++) {
        const chunk = await filesRepository.chunk(ctx.db, file.id, seq);
        if (!chunk) return;
        yield chunk;
      }
    },
  };
}
