/**
 * The idempotency-key table, the same in every service schema whose writes take an
 * `Idempotency-Key`: the TypeORM entity and the migration SQL, both from the schema's name, so
 * that the columns are written once. It lives beside the writes it protects, so that an answer is
 * stored in the same transaction as its write.
 */
import { EntitySchema } from 'typeorm';

export interface IdempotencyKeyRow {
  /** The application (customer for the application routes) the key belongs to. */
  scopeId: string;
  key: string;
  /** Method and path of the request that first used the key (`POST /v1/threads/t1/messages`). */
  route: string;
  /** Hash of its body; null until known (a multipart body is read by the handler). */
  fingerprint: string | null;
  /** The request running it now or last: only that request may store the answer. */
  claim: string;
  /** The stored answer (status, headers, body as JSON; sealed where the service seals them); null while running. */
  answer: string | null;
  /** While running: until when the claim holds without being renewed (its process died otherwise). */
  lockedUntil: Date;
  expiresAt: Date;
  createdAt: Date;
}

/** The entity of `<schema>.idempotency_keys`; list it among the service's entities. */
export function idempotencyKeyEntity(schema: string): EntitySchema<IdempotencyKeyRow> {
  return new EntitySchema<IdempotencyKeyRow>({
    name: 'IdempotencyKey',
    tableName: 'idempotency_keys',
    schema,
    columns: {
      scopeId: { name: 'scope_id', type: 'uuid', primary: true, primaryKeyConstraintName: 'idempotency_keys_pkey' },
      key: { type: 'text', primary: true, primaryKeyConstraintName: 'idempotency_keys_pkey' },
      route: { type: 'text' },
      fingerprint: { type: 'text', nullable: true },
      claim: { type: 'uuid' },
      answer: { type: 'text', nullable: true },
      lockedUntil: { name: 'locked_until', type: 'timestamptz' },
      expiresAt: { name: 'expires_at', type: 'timestamptz' },
      createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'clock_timestamp()' },
    },
    // The worker prunes expired keys.
    indices: [{ name: 'idempotency_keys_expires_idx', columns: ['expiresAt'] }],
  });
}

/**
 * The statements that create and drop `<schema>.idempotency_keys`, for the migration that adds it
 * to a schema. Applied migrations call this: never change it; a later change to the table is a
 * new migration of its own.
 */
export function idempotencyKeyTableMigration(schema: string): { up: string[]; down: string[] } {
  const table = `"${schema}"."idempotency_keys"`;
  return {
    up: [
      `CREATE TABLE ${table} ("scope_id" uuid NOT NULL, "key" text NOT NULL, "route" text NOT NULL, "fingerprint" text, "claim" uuid NOT NULL, "answer" text, "locked_until" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(), CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("scope_id", "key"))`,
      `CREATE INDEX "idempotency_keys_expires_idx" ON ${table} ("expires_at")`,
    ],
    down: [`DROP INDEX "${schema}"."idempotency_keys_expires_idx"`, `DROP TABLE ${table}`],
  };
}
