/**
 * The `application_purges` table, the same in every service schema whose data a deleted
 * application leaves behind: the TypeORM entity and the migration SQL, both from the schema's
 * name, so that the columns are written once.
 */
import { EntitySchema } from 'typeorm';

/**
 * An application deletion that reached the service (the deletion cascade): pending until its purge
 * job removed everything of the application, so that a job lost with Redis is queued again, then
 * kept as a tombstone (`completedAt` set). `requestId` tells a request made again (a retried
 * DELETE) from the one a job read.
 */
export interface ApplicationPurgeRow {
  applicationId: string;
  requestId: string;
  requestedAt: Date;
  completedAt: Date | null;
}

/** The entity of `<schema>.application_purges`; list it among the service's entities. */
export function applicationPurgeEntity(schema: string): EntitySchema<ApplicationPurgeRow> {
  return new EntitySchema<ApplicationPurgeRow>({
    name: 'ApplicationPurge',
    tableName: 'application_purges',
    schema,
    columns: {
      applicationId: { name: 'application_id', type: 'uuid', primary: true },
      requestId: { name: 'request_id', type: 'text' },
      requestedAt: { name: 'requested_at', type: 'timestamptz', default: () => 'now()' },
      completedAt: { name: 'completed_at', type: 'timestamptz', nullable: true },
    },
  });
}

/**
 * The statements that create and drop `<schema>.application_purges`, for the migration that adds
 * it to a schema. Applied migrations call this: never change it; a later change to the table is a
 * new migration of its own.
 */
export function applicationPurgesTableMigration(schema: string): { up: string[]; down: string[] } {
  const table = `"${schema}"."application_purges"`;
  return {
    up: [
      `CREATE TABLE ${table} ("application_id" uuid NOT NULL, "request_id" text NOT NULL, "requested_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_47132fb86c48dc3eaca04ee8147" PRIMARY KEY ("application_id"))`,
    ],
    down: [`DROP TABLE ${table}`],
  };
}

/** The statements that keep a completed deletion as a tombstone (`completed_at`), added later. */
export function applicationPurgeTombstonesMigration(schema: string): { up: string[]; down: string[] } {
  const table = `"${schema}"."application_purges"`;
  return {
    up: [`ALTER TABLE ${table} ADD "completed_at" TIMESTAMP WITH TIME ZONE`],
    down: [`DELETE FROM ${table} WHERE "completed_at" IS NOT NULL`, `ALTER TABLE ${table} DROP COLUMN "completed_at"`],
  };
}
