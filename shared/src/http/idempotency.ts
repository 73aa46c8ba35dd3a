/**
 * Safe retries of writes that are not naturally idempotent: a request may carry an
 * `Idempotency-Key` header (1 to 255 printable ASCII characters) on the routes the route table
 * marks `idempotent`. The first request with a key runs; its answer (status, body, the headers of
 * an error answer) is stored for the key, scoped by the caller (application, or customer on the
 * application routes), for IDEMPOTENCY_TTL_HOURS. A repeat with the same key, route and body gets
 * the stored answer with `Idempotent-Replayed: true` and writes nothing; the same key with another
 * route or body gets `422 idempotency_key_reused`; a repeat while the first still runs gets
 * `409 idempotency_key_in_use` with `Retry-After: 1` (answered at once rather than waiting, so
 * that no request holds a connection for another's sake). A 5xx is not stored: the retry runs
 * again. A 4xx is stored.
 *
 * The record lives in the owning service's PostgreSQL schema (IdempotencyStore, built by
 * `@collab/shared/storage`), and a write stores its answer in its own transaction
 * (`IdempotentWrite.record`): once the write committed, its answer exists, whatever happens to
 * the process afterwards. Only the request holding the key's claim can store an answer, so two
 * requests can never both write.
 *
 * This file has no database code: service apps (and the gateway, which loads this entry point)
 * do not load pg through it.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RouteDef } from '../routes/route.js';
import type { Queryable } from '../sql.js';
import { parseJsonObject } from './json-body.js';
import { sendJson } from './respond.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const PRINTABLE_ASCII = /^[\x20-\x7E]+$/;

/** How long a claim holds without being renewed; a running request renews it every third of that. */
export const IDEMPOTENCY_LEASE_MS = 10_000;

/** An answer as stored and replayed. */
export interface StoredAnswer {
  status: number;
  body: unknown;
  /** Headers an error answer carries (e.g. `Retry-After`). */
  headers?: Record<string, string>;
}

export interface ClaimRequest {
  scopeId: string;
  key: string;
  /** Method and path as sent, e.g. `POST /v1/threads/t1/messages`. */
  route: string;
  /** Null when the handler reads the body itself (multipart) and gives it later. */
  fingerprint: string | null;
}

export interface ClaimRef {
  scopeId: string;
  key: string;
  claim: string;
}

export type ClaimOutcome =
  /** This request runs; only it can store the key's answer. */
  | { kind: 'claimed'; ref: ClaimRef }
  /** A finished request with this key, route and body. */
  | { kind: 'replay'; answer: StoredAnswer }
  /** A finished request whose body fingerprint is compared once the handler has read this body. */
  | { kind: 'verify'; fingerprint: string; answer: StoredAnswer }
  | { kind: 'in_use' }
  | { kind: 'reused' };

/** Where a service keeps its keys (its own schema's `idempotency_keys`). */
export interface IdempotencyStore {
  claim(request: ClaimRequest): Promise<ClaimOutcome>;
  /**
   * Stores the answer (and the body's fingerprint, when it was given late) while `ref` still holds
   * the key, in the caller's transaction when given one. False when the claim was lost (its
   * lease ran out and another request took the key over).
   */
  store(tx: Queryable | null, ref: ClaimRef, answer: StoredAnswer, fingerprint: string | null): Promise<boolean>;
  /** Extends the claim's lease while its request runs. */
  renew(ref: ClaimRef): Promise<void>;
  /** Removes the key while `ref` holds it, in the caller's transaction when given one: the retry runs again. */
  release(tx: Queryable | null, ref: ClaimRef): Promise<void>;
}

/** What a write's use case does with the request's key. */
export interface IdempotentWrite {
  /** Whether the request has a key: only then must its write and the answer be stored together. */
  readonly keyed: boolean;
  /**
   * In the write's transaction: stores its answer with it. Throws `idempotency_key_in_use` when
   * another request took the key over meanwhile, which rolls the write back.
   */
  record(tx: Queryable, answer: StoredAnswer): Promise<void>;
  /** In the transaction that undoes the write (answered 5xx): removes the key with it. */
  forget(tx: Queryable): Promise<void>;
  /**
   * For a body the handler reads itself (multipart): its fingerprint, once read and before anything
   * is written. On a repeat of a finished request, throws its replay or `idempotency_key_reused`.
   */
  bodyFingerprint(fingerprint: string): void;
}

/**
 * What a use case calls in its write's transaction with what it wrote (an id): the handler turns
 * that into the request's answer and stores it with the write (`IdempotentWrite.record`).
 */
export type RecordWrite<T> = (tx: Queryable, written: T) => Promise<void>;

/** What the key's handling needs of a request (the service app's requests have it all). */
export interface IdempotentRequest extends IncomingMessage {
  ctx: { applicationId?: string; customerId?: string };
  log: Logger;
  /** The path without its query. */
  path: string;
  /** The raw body, read before the handler runs, unless the route reads its own (multipart, files). */
  body: Buffer | undefined;
  /** The request's Idempotency-Key handling; does nothing on requests without one. */
  idempotency: IdempotentWrite;
}

/** The handling of a request without a key: nothing is stored. */
export const NO_IDEMPOTENCY_KEY: IdempotentWrite = {
  keyed: false,
  record: async () => undefined,
  forget: async () => undefined,
  bodyFingerprint: () => undefined,
};

/** Thrown by `bodyFingerprint` on a repeat with the same body: answered with the stored answer. */
export class IdempotentReplay extends Error {
  constructor(readonly answer: StoredAnswer) {
    super('idempotent replay');
  }
}

/** The key of the header's value; 400 naming the header when it is not 1 to 255 printable ASCII characters. */
export function parseIdempotencyKey(value: string | string[]): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > IDEMPOTENCY_KEY_MAX_LENGTH || !PRINTABLE_ASCII.test(value))
    throw new ApiError(
      'invalid_field',
      `${IDEMPOTENCY_KEY_HEADER} header is not valid: expected 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters.`,
    );
  return value;
}

/** JSON with object keys sorted, so that the same body with its keys in another order hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** The fingerprint of a JSON body: its canonical form's hash, or its bytes' when it is not a JSON object. */
export function jsonBodyFingerprint(raw: Buffer | undefined): string {
  const hash = createHash('sha256');
  try {
    hash.update(canonicalJson(parseJsonObject(raw)));
  } catch {
    // Invalid bodies are refused by the handler; a repeat of the same bytes replays that refusal.
    hash.update('raw:').update(raw ?? Buffer.alloc(0));
  }
  return hash.digest('hex');
}

function sendAnswer(res: ServerResponse, answer: StoredAnswer): void {
  res.statusCode = answer.status;
  for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
  res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
  sendJson(res, answer.body);
}

function inUse(): ApiError {
  return new ApiError('idempotency_key_in_use', undefined, { headers: { 'Retry-After': '1' } });
}

function reused(): ApiError {
  return new ApiError('idempotency_key_reused');
}

/** The answer of a request that ran; an error's only when it is the client's (4xx). */
function answerOfError(error: unknown): StoredAnswer | null {
  if (!(error instanceof ApiError) || error.status >= 500) return null;
  return { status: error.status, body: error.toBody(), ...(Object.keys(error.headers).length > 0 ? { headers: error.headers } : {}) };
}

export interface IdempotentRouteOptions {
  route: RouteDef;
  store: IdempotencyStore;
  /** Counts each replayed answer. */
  onReplay: () => void;
}

/**
 * Runs `handler` (which returns the body of a JSON answer) under the request's Idempotency-Key,
 * when it has one.
 */
// Over 80 lines: one request's path through the key (new, replayed, in flight, conflicting), read best top to bottom.
export function idempotentHandler<R extends IdempotentRequest>(
  options: IdempotentRouteOptions,
  handler: (req: R, res: ServerResponse) => unknown,
): (req: R, res: ServerResponse) => Promise<void> {
  const { route, store } = options;
  const replay = (res: ServerResponse, answer: StoredAnswer) => {
    options.onReplay();
    sendAnswer(res, answer);
  };

  return async (req, res) => {
    const header = req.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
    if (header === undefined) {
      req.idempotency = NO_IDEMPOTENCY_KEY;
      const body = await handler(req, res);
      if (!res.headersSent) sendJson(res, body);
      return;
    }
    const key = parseIdempotencyKey(header);
    const scopeId = route.auth === 'customer' ? req.ctx.customerId : req.ctx.applicationId;
    if (!scopeId) throw new Error(`${route.id}: an idempotent route needs a verified caller`);
    let fingerprint = route.bodyType === 'multipart' ? null : jsonBodyFingerprint(Buffer.isBuffer(req.body) ? req.body : undefined);
    const outcome = await store.claim({ scopeId, key, route: `${req.method} ${req.path}`, fingerprint });
    if (outcome.kind === 'replay') return replay(res, outcome.answer);
    if (outcome.kind === 'in_use') throw inUse();
    if (outcome.kind === 'reused') throw reused();

    if (outcome.kind === 'verify') {
      // A finished request's key with a body the handler reads: compared once read, before any write.
      req.idempotency = {
        keyed: true,
        bodyFingerprint(given) {
          throw given === outcome.fingerprint ? new IdempotentReplay(outcome.answer) : reused();
        },
        record: () => Promise.reject(new Error(`${route.id}: wrote before giving its body's fingerprint`)),
        forget: () => Promise.reject(new Error(`${route.id}: wrote before giving its body's fingerprint`)),
      };
      try {
        await handler(req, res);
      } catch (error) {
        if (error instanceof IdempotentReplay) return replay(res, error.answer);
        throw error;
      }
      throw new Error(`${route.id}: answered without giving its body's fingerprint`);
    }

    const { ref } = outcome;
    /** The answer stored with the write, if it committed. */
    let recorded: StoredAnswer | null = null;
    req.idempotency = {
      keyed: true,
      async record(tx, answer) {
        if (!(await store.store(tx, ref, answer, fingerprint))) throw inUse();
        recorded = answer;
      },
      async forget(tx) {
        await store.release(tx, ref);
      },
      bodyFingerprint(given) {
        fingerprint = given;
      },
    };
    const renewal = setInterval(() => {
      store.renew(ref).catch((error: unknown) => req.log.warn({ err: (error as Error).message }, 'idempotency key not renewed'));
    }, IDEMPOTENCY_LEASE_MS / 3);
    renewal.unref();
    try {
      const body = await handler(req, res);
      const answer: StoredAnswer = { status: res.statusCode, body };
      // Stored again when the answer differs from the one stored with the write (a batch applied
      // while the request waited answers 200 where its write stored 202).
      if (JSON.stringify(answer) !== JSON.stringify(recorded)) await store.store(null, ref, answer, fingerprint);
      if (!res.headersSent) sendJson(res, body);
    } catch (error) {
      const answer = answerOfError(error);
      // A refusal is stored only with its body's fingerprint: a multipart body refused before it
      // was read leaves the key free, as nothing was written.
      if (answer && fingerprint !== null) await store.store(null, ref, answer, fingerprint);
      // A failure (5xx) is not stored, unless its write committed: then the write's answer stays.
      else if (!recorded)
        await store.release(null, ref).catch((failure: unknown) =>
          // Left to its lease: the key is free again once it runs out.
          req.log.warn({ err: (failure as Error).message }, 'idempotency key not released'),
        );
      throw error;
    } finally {
      clearInterval(renewal);
    }
  };
}
