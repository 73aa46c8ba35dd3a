/**
 * The outbox table, the same in every service schema that records work in it: the TypeORM entity
 * and the migration SQL, both from the schema's name, so that the columns are written once.
 */
import { EntitySchema } from 'typeorm';
import { entityColumns, sqlTable } from '../sql.js';

export interface OutboxRow {
  id: string;
  applicationId: string;
  topic: string;
  payload: Record<string, unknown>;
  /** The request that recorded the entry, so that the logs of its handling carry its id. */
  requestId: string;
  /** When the entry was inserted (clock_timestamp(), so entries of one transaction keep their order). */
  createdAt: Date;
  /** Failed runs so far. */
  attempts: number;
  /** When the relay may run the entry (again). */
  availableAt: Date;
  lastError: string | null;
}

/** The entity of `<schema>.outbox`; list it among the service's entities. */
export function outboxEntity(schema: string): EntitySchema<OutboxRow> {
  return new EntitySchema<OutboxRow>({
    name: 'Outbox',
    tableName: 'outbox',
    schema,
    columns: {
      id: { type: 'uuid', primary: true, primaryKeyConstraintName: 'outbox_pkey' },
      applicationId: { name: 'application_id', type: 'uuid' },
      topic: { type: 'text' },
      payload: { type: 'jsonb' },
      requestId: { name: 'request_id', type: 'text' },
      createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'clock_timestamp()' },
      attempts: { type: 'int', default: 0 },
      availableAt: { name: 'available_at', type: 'timestamptz', default: () => 'clock_timestamp()' },
      lastError: { name: 'last_error', type: 'text', nullable: true },
    },
    // The relay reads due entries oldest first.
    indices: [{ name: 'outbox_created_idx', columns: ['createdAt', 'id'] }],
    // No foreign key to the application: an application's own deletion is recorded here too.
  });
}

/** `<schema>.outbox` as `o`: the column map its reads select through. */
export function outboxTable(schema: string) {
  return sqlTable(`"${schema}"."outbox"`, 'o', entityColumns(outboxEntity(schema)));
}

/**
 * The statements that create and drop `<schema>.outbox`, for the migration that adds it to a
 * schema. Applied migrations call this: never change it; a later change to the table is a new
 * migration of its own.
 */
export function outboxTableMigration(schema: string): { up: string[]; down: string[] } {
  const table = `"${schema}"."outbox"`;
  return {
    up: [
      `CREATE TABLE ${table} ("id" uuid NOT NULL, "application_id" uuid NOT NULL, "topic" text NOT NULL, "payload" jsonb NOT NULL, "request_id" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(), "attempts" integer NOT NULL DEFAULT '0', "available_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT clock_timestamp(), "last_error" text, CONSTRAINT "outbox_pkey" PRIMARY KEY ("id"))`,
      `CREATE INDEX "outbox_created_idx" ON ${table} ("created_at", "id")`,
    ],
    down: [`DROP INDEX "${schema}"."outbox_created_idx"`, `DROP TABLE ${table}`],
  };
}
