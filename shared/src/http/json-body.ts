/**
 * JSON request bodies: at most 10 MB, nested at most 100 levels, and always a JSON object
 * (behavior.md §1, decisions.md 4 and 30). Parsed from raw bytes so that every failure gets the
 * API's own error instead of the framework's.
 */
import express, { type RequestHandler } from 'express';
import { ApiError } from '../errors.js';
import { isPlainObject } from '../schema/schema.js';

export const MAX_JSON_BODY_BYTES = 10 * 1024 * 1024;
export const MAX_JSON_DEPTH = 100;

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

/**
 * Reads the raw body (at most 10 MB) into `req.body` as a Buffer. It is parsed when the handler
 * asks for it (`routeBody`), so that checks the API orders before the body (path ids, existence)
 * come first.
 */
export const rawJsonBody: RequestHandler = express.raw({ type: () => true, limit: MAX_JSON_BODY_BYTES });
