/** The records of a customer dump's import: its progress, its dump in chunks, and the ids it mapped. */
import { EntitySchema } from 'typeorm';
import { IDENTITY_SCHEMA } from './schema.js';

export type ImportState = 'waiting' | 'active' | 'completed' | 'failed';

/**
 * An import of a customer dump (npm run import, POST /v1/customer/imports): its progress, what it
 * imported per table, what it skipped and why, the conflicts it found, and its outcome.
 */
export interface ImportRecordRow {
  id: string;
  /** The customer the dump's applications belong to here. */
  customerId: string;
  state: ImportState;
  /** Rows already stored with other data are replaced instead of reported as conflicts. */
  overwrite: boolean;
  /** Whether the blobs of the dump's files were given with it (`--files DIR`). */
  withFiles: boolean;
  dumpBytes: string;
  bytesRead: string;
  /** Tables whose rows are all imported: a resumed import passes over them. */
  tablesDone: string[];
  counts: Record<string, { imported: number; existing: number }>;
  skipped: Record<string, { rows: number; reason: string }>;
  conflicts: { entity: string; id: string; applicationID?: string; reason: string }[];
  error: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export const ImportRecordEntity = new EntitySchema<ImportRecordRow>({
  name: 'ImportRecord',
  tableName: 'imports',
  schema: IDENTITY_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    customerId: { name: 'customer_id', type: 'uuid' },
    state: { type: 'text', default: 'waiting' },
    overwrite: { type: 'boolean', default: false },
    withFiles: { name: 'with_files', type: 'boolean', default: false },
    dumpBytes: { name: 'dump_bytes', type: 'bigint' },
    bytesRead: { name: 'bytes_read', type: 'bigint', default: 0 },
    tablesDone: { name: 'tables_done', type: 'text', array: true, default: () => "'{}'" },
    counts: { type: 'jsonb', default: () => "'{}'" },
    skipped: { type: 'jsonb', default: () => "'{}'" },
    conflicts: { type: 'jsonb', default: () => "'[]'" },
    error: { type: 'text', nullable: true },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
    startedAt: { name: 'started_at', type: 'timestamptz', nullable: true },
    finishedAt: { name: 'finished_at', type: 'timestamptz', nullable: true },
  },
  indices: [{ name: 'imports_customer_idx', columns: ['customerId', 'createdAt'] }],
  checks: [{ name: 'imports_state_check', expression: `state IN ('waiting', 'active', 'completed', 'failed')` }],
});

/** The dump of an unfinished import, in 1 MiB chunks (removed once it has finished). */
export interface ImportChunkRow {
  importId: string;
  seq: number;
  data: Buffer;
}

export const ImportChunkEntity = new EntitySchema<ImportChunkRow>({
  name: 'ImportChunk',
  tableName: 'import_chunks',
  schema: IDENTITY_SCHEMA,
  columns: {
    importId: { name: 'import_id', type: 'uuid', primary: true },
    seq: { type: 'integer', primary: true },
    data: { type: 'bytea' },
  },
  foreignKeys: [{ target: 'ImportRecord', columnNames: ['importId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

/** The bytes of a dump's file given with an unfinished import, in 1 MiB chunks (removed once it has finished). */
export interface ImportFileChunkRow {
  importId: string;
  fileId: string;
  seq: number;
  data: Buffer;
}

export const ImportFileChunkEntity = new EntitySchema<ImportFileChunkRow>({
  name: 'ImportFileChunk',
  tableName: 'import_file_chunks',
  schema: IDENTITY_SCHEMA,
  columns: {
    importId: { name: 'import_id', type: 'uuid', primary: true },
    fileId: { name: 'file_id', type: 'uuid', primary: true },
    seq: { type: 'integer', primary: true },
    data: { type: 'bytea' },
  },
  foreignKeys: [{ target: 'ImportRecord', columnNames: ['importId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

/**
 * A row of a customer's dump (its internal UUID, per kind: user, group, thread, message,
 * reaction) and what it became here: the customer-facing id in its application, and for threads
 * and messages the conversation service's reference (and a message's thread's).
 */
export interface ImportMappingRow {
  customerId: string;
  kind: string;
  originalId: string;
  applicationId: string;
  externalId: string;
  ref: string | null;
  parentRef: string | null;
}

export const ImportMappingEntity = new EntitySchema<ImportMappingRow>({
  name: 'ImportMapping',
  tableName: 'import_mappings',
  schema: IDENTITY_SCHEMA,
  columns: {
    customerId: { name: 'customer_id', type: 'uuid', primary: true },
    kind: { type: 'text', primary: true },
    originalId: { name: 'original_id', type: 'uuid', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    externalId: { name: 'external_id', type: 'text' },
    ref: { type: 'text', nullable: true },
    parentRef: { name: 'parent_ref', type: 'text', nullable: true },
  },
});
