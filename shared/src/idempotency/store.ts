/**
 * The Idempotency-Key records of one service, in its own schema's `idempotency_keys` (see
 * http/idempotency.ts for the rules). PostgreSQL rather than Redis: the answer must be stored in
 * the same transaction as the write it belongs to, which only the write's own database can do,
 * and it then has the write's durability (it survives restarts, and every replica sees it). Every
 * time is PostgreSQL's clock, shared by all replicas.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  IDEMPOTENCY_LEASE_MS,
  type ClaimOutcome,
  type ClaimRef,
  type ClaimRequest,
  type IdempotencyStore,
  type StoredAnswer,
} from '../http/idempotency.js';
import { countAffected, deleteBatch, drainBatches, rows, type Queryable } from '../sql.js';

/** Encrypts stored answers (identity's answers carry application secrets); `context` binds a sealed answer to its key. */
export interface AnswerSeal {
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
}

export interface IdempotencyStoreOptions {
  schema: string;
  /** IDEMPOTENCY_TTL_HOURS: how long a key and its answer are kept. */
  ttlHours: number;
  seal?: AnswerSeal;
}

interface KeyState {
  route: string;
  fingerprint: string | null;
  answer: string | null;
  locked: boolean;
  expired: boolean;
}

const LEASE_SECONDS = IDEMPOTENCY_LEASE_MS / 1000;

// Over 80 lines: a factory whose methods (claim, store, renew, release) share the table and the sealing of answers.
export function createIdempotencyStore(db: DataSource, options: IdempotencyStoreOptions): IdempotencyStore {
  const table = `"${options.schema}"."idempotency_keys"`;
  const sealContext = (scopeId: string, key: string) => `idempotency:${scopeId}:${key}`;

  function encode(scopeId: string, key: string, answer: StoredAnswer): string {
    const text = JSON.stringify(answer);
    return options.seal ? options.seal.seal(text, sealContext(scopeId, key)) : text;
  }

  function decode(scopeId: string, key: string, stored: string): StoredAnswer {
    return JSON.parse(options.seal ? options.seal.open(stored, sealContext(scopeId, key)) : stored) as StoredAnswer;
  }

  /** One attempt; null when the key vanished between the insert and the read (its claim was released). */
  async function claimOnce(tx: Queryable, request: ClaimRequest): Promise<ClaimOutcome | null> {
    const { scopeId, key, route, fingerprint } = request;
    const claim = randomUUID();
    const fresh = [scopeId, key, route, fingerprint, claim, LEASE_SECONDS, options.ttlHours];
    // Waits for a concurrent request inserting the same key to commit, then conflicts.
    const inserted = await countAffected(
      tx,
      `INSERT INTO ${table} (scope_id, key, route, fingerprint, claim, locked_until, expires_at)
       VALUES ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6), clock_timestamp() + make_interval(hours => $7))
       ON CONFLICT (scope_id, key) DO NOTHING`,
      fresh,
    );
    const claimed: ClaimOutcome = { kind: 'claimed', ref: { scopeId, key, claim } };
    if (inserted > 0) return claimed;

    const [state] = await rows<KeyState>(
      tx,
      `SELECT route, fingerprint, answer, locked_until > clock_timestamp() AS locked, expires_at <= clock_timestamp() AS expired
       FROM ${table} WHERE scope_id = $1 AND key = $2 FOR UPDATE`,
      [scopeId, key],
    );
    if (!state) return null;
    if (state.expired) {
      // An expired key is a new one.
      await tx.query(
        `UPDATE ${table} SET route = $3, fingerprint = $4, claim = $5, answer = NULL, created_at = clock_timestamp(),
           locked_until = clock_timestamp() + make_interval(secs => $6), expires_at = clock_timestamp() + make_interval(hours => $7)
         WHERE scope_id = $1 AND key = $2`,
        fresh,
      );
      return claimed;
    }
    if (state.route !== route || (fingerprint !== null && state.fingerprint !== null && state.fingerprint !== fingerprint))
      return { kind: 'reused' };
    if (state.answer !== null) {
      const answer = decode(scopeId, key, state.answer);
      return fingerprint === null ? { kind: 'verify', fingerprint: state.fingerprint!, answer } : { kind: 'replay', answer };
    }
    if (state.locked) return { kind: 'in_use' };
    // Its request stopped renewing the claim (its process died) before its write committed:
    // nothing was written, this request runs it. Should the first still commit, its claim no
    // longer holds and its write rolls back.
    await tx.query(
      `UPDATE ${table} SET claim = $3, fingerprint = COALESCE(fingerprint, $4), locked_until = clock_timestamp() + make_interval(secs => $5)
       WHERE scope_id = $1 AND key = $2`,
      [scopeId, key, claim, fingerprint, LEASE_SECONDS],
    );
    return claimed;
  }

  return {
    async claim(request) {
      // A key released between the insert and the read is tried again; one that keeps vanishing is busy.
      for (let attempt = 0; attempt < 3; attempt++) {
        const outcome = await db.transaction((tx) => claimOnce(tx, request));
        if (outcome) return outcome;
      }
      return { kind: 'in_use' };
    },

    async store(tx, ref, answer, fingerprint) {
      const stored = await countAffected(
        tx ?? db,
        `UPDATE ${table} SET answer = $4, fingerprint = COALESCE($5, fingerprint) WHERE scope_id = $1 AND key = $2 AND claim = $3`,
        [ref.scopeId, ref.key, ref.claim, encode(ref.scopeId, ref.key, answer), fingerprint],
      );
      return stored === 1;
    },

    async renew(ref: ClaimRef) {
      await db.query(
        `UPDATE ${table} SET locked_until = clock_timestamp() + make_interval(secs => $4)
         WHERE scope_id = $1 AND key = $2 AND claim = $3 AND answer IS NULL`,
        [ref.scopeId, ref.key, ref.claim, LEASE_SECONDS],
      );
    },

    async release(tx, ref) {
      await (tx ?? db).query(`DELETE FROM ${table} WHERE scope_id = $1 AND key = $2 AND claim = $3`, [ref.scopeId, ref.key, ref.claim]);
    },
  };
}

/** Deletes the schema's expired keys, `batchSize` rows per transaction; returns how many. */
export function pruneExpiredIdempotencyKeys(db: Queryable, schema: string, batchSize: number): Promise<number> {
  const table = `"${schema}"."idempotency_keys"`;
  return drainBatches(() => deleteBatch(db, table, 'ctid', 'expires_at <= clock_timestamp()', [], batchSize));
}
