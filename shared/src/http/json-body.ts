/**
 * JSON request bodies: at most 10 MB, valid UTF-8, nested at most 100 levels, and always a JSON
 * object. Parsed from raw bytes so that every failure gets
 * the API's own error instead of the framework's.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import getRawBody from 'raw-body';
import { ApiError } from '../errors.js';
import { isPlainObject } from '../schema/object-schemas.js';

export const MAX_JSON_BODY_BYTES = 10 * 1024 * 1024;
export const MAX_JSON_DEPTH = 100;
/**
 * The body limit of calls between the services, sized from the public one: an event built from a
 * message accepted at MAX_JSON_BODY_BYTES carries its content, its plain text, its thread and the
 * users it notifies, and must fit one call. A caller handing over many at once splits them into
 * calls that fit (recordWebhookEvents).
 */
export const MAX_INTERNAL_BODY_BYTES = 4 * MAX_JSON_BODY_BYTES;

/** Depth of brackets outside strings, without parsing (so a hostile body cannot exhaust the stack). */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index);
    if (inString) {
      if (char === 0x5c /* \ */) index++;
      else if (char === 0x22 /* " */) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b /* { */ || char === 0x5b /* [ */) {
      if (++depth > maxDepth) return true;
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) depth--;
  }
  return false;
}

export function parseJsonObject(raw: Buffer | undefined): Record<string, unknown> {
  // Decoding would turn invalid bytes into U+FFFD and store that in place of what the client sent.
  if (raw && !isUtf8(raw)) throw new ApiError('invalid_request', 'Request body is not valid UTF-8.');
  // A leading byte-order mark is dropped, as Express's JSON parser (iconv-lite) does.
  const text = raw && raw.length > 0 ? raw.toString('utf8').replace(/^\uFEFF/, '') : '';
  if (text.trim() === '') throw new ApiError('invalid_request', 'Request body is empty; expected a JSON object.');
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH))
    throw new ApiError('invalid_request', `Request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ApiError('invalid_request', `Request body is not valid JSON: ${(error as Error).message}`);
  }
  if (!isPlainObject(value)) throw new ApiError('invalid_request', 'Request body must be a JSON object.');
  return value;
}

/** Request bodies may come compressed, as Express's body parsers accept them. */
const DECOMPRESSORS: Record<string, () => Transform> = {
  gzip: zlib.createGunzip,
  deflate: zlib.createInflate,
  br: zlib.createBrotliDecompress,
};

const NO_BODY = Buffer.alloc(0);

/**
 * Reads the raw body (at most `limit`, 10 MB unless given, once decompressed) as a Buffer. It is parsed when the handler
 * asks for it (`routeBody`), so that checks the API orders before the body (path ids, existence)
 * come first. A body over the limit is refused as soon as it is known to be (from its
 * Content-Length, or once 10 MB have arrived): the rest is left to sendError, which answers 413 at
 * once and discards it.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_JSON_BODY_BYTES): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  // Without a Content-Length or Transfer-Encoding a request has no body (HTTP/1.1): nothing to
  // wait for, the case of every GET and DELETE.
  if (encoding === 'identity' && req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined)
    return NO_BODY;
  const decompress = encoding === 'identity' ? null : DECOMPRESSORS[encoding];
  if (decompress === undefined) throw new ApiError('invalid_request', `Unsupported Content-Encoding "${encoding}".`);
  const decompressor = decompress?.();
  try {
    return await getRawBody(decompressor ? req.pipe(decompressor) : req, {
      // A compressed body's Content-Length says nothing about its decompressed size.
      length: decompressor ? undefined : req.headers['content-length'],
      limit,
    });
  } catch (failure) {
    const error = failure as Error & { type?: string };
    if (decompressor) {
      req.unpipe(decompressor);
      decompressor.destroy();
    }
    // raw-body's own failures carry a type sendError maps; the decompressor's do not.
    throw error.type ? error : new ApiError('invalid_request', `Request body could not be decompressed: ${error.message}`);
  }
}
