/**
 * The identity schema as TypeORM entities. They describe the tables the migrations create (a test
 * checks that generating a migration from them yields nothing); queries live in repositories.
 */
import type { ErrorBody } from '@collab/shared';
import { idempotencyKeyEntity, outboxEntity } from '@collab/shared/storage';
import { EntitySchema } from 'typeorm';

export const IDENTITY_SCHEMA = 'identity';

/**
 * Customer and application secrets are stored encrypted (domain/secrets.ts): `secretEncrypted`
 * holds the sealed value. `plaintextSecret` holds a secret stored before encryption existed until
 * identity encrypts it at its next start; exactly one of the two is set.
 */
interface StoredSecret {
  secretEncrypted: string | null;
  plaintextSecret: string | null;
}

const storedSecretColumns = {
  secretEncrypted: { name: 'secret_encrypted', type: 'text', nullable: true },
  plaintextSecret: { name: 'plaintext_secret', type: 'text', nullable: true },
} as const;

const oneStoredSecret = (table: string) => ({
  name: `${table}_one_secret_check`,
  expression: 'num_nonnulls(secret_encrypted, plaintext_secret) = 1',
});

export interface CustomerRow extends StoredSecret {
  id: string;
  createdAt: Date;
}

export const CustomerEntity = new EntitySchema<CustomerRow>({
  name: 'Customer',
  tableName: 'customers',
  schema: IDENTITY_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    ...storedSecretColumns,
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
  },
  checks: [oneStoredSecret('customers')],
});

export interface ApplicationRow extends StoredSecret {
  id: string;
  customerId: string;
  name: string;
  iconUrl: string | null;
  eventWebhookUrl: string | null;
  /** Event types eventWebhookUrl receives; null when never set (the default types then). */
  eventWebhookSubscriptions: string[] | null;
  redirectUri: string | null;
  emailSettings: Record<string, unknown>;
  /**
   * The secret before the last rotation, sealed like the current one, and when it stops being
   * accepted for server tokens (domain/applications/secret-rotation.ts); both null when none.
   */
  previousSecretEncrypted: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
}

export const ApplicationEntity = new EntitySchema<ApplicationRow>({
  name: 'Application',
  tableName: 'applications',
  schema: IDENTITY_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    customerId: { name: 'customer_id', type: 'uuid' },
    name: { type: 'text' },
    ...storedSecretColumns,
    iconUrl: { name: 'icon_url', type: 'text', nullable: true },
    eventWebhookUrl: { name: 'event_webhook_url', type: 'text', nullable: true },
    eventWebhookSubscriptions: { name: 'event_webhook_subscriptions', type: 'text', array: true, nullable: true },
    redirectUri: { name: 'redirect_uri', type: 'text', nullable: true },
    emailSettings: { name: 'email_settings', type: 'jsonb', default: () => "'{}'" },
    previousSecretEncrypted: { name: 'previous_secret_encrypted', type: 'text', nullable: true },
    previousSecretExpiresAt: { name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
  },
  indices: [{ name: 'applications_customer_idx', columns: ['customerId', 'createdAt'] }],
  checks: [
    oneStoredSecret('applications'),
    { name: 'applications_previous_secret_check', expression: 'num_nulls(previous_secret_encrypted, previous_secret_expires_at) <> 1' },
  ],
  foreignKeys: [{ target: 'Customer', columnNames: ['customerId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

export interface UserRow {
  internalId: string;
  applicationId: string;
  externalId: string;
  name: string | null;
  email: string | null;
  shortName: string | null;
  profilePictureUrl: string | null;
  status: 'active' | 'deleted';
  metadata: Record<string, string | number | boolean>;
  createdAt: Date;
}

export const UserEntity = new EntitySchema<UserRow>({
  name: 'User',
  tableName: 'users',
  schema: IDENTITY_SCHEMA,
  columns: {
    internalId: { name: 'internal_id', type: 'bigint', primary: true, generated: 'increment' },
    applicationId: { name: 'application_id', type: 'uuid' },
    externalId: { name: 'external_id', type: 'text', collation: 'C' },
    name: { type: 'text', nullable: true },
    email: { type: 'text', nullable: true },
    shortName: { name: 'short_name', type: 'text', nullable: true },
    profilePictureUrl: { name: 'profile_picture_url', type: 'text', nullable: true },
    status: { type: 'text', default: 'active' },
    metadata: { type: 'jsonb', default: () => "'{}'" },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
  },
  uniques: [{ name: 'users_application_external_id_key', columns: ['applicationId', 'externalId'] }],
  // GIN (jsonb_path_ops) for the metadata containment filter; created by hand in the migration.
  indices: [{ name: 'users_metadata_idx', columns: ['metadata'], synchronize: false }],
  foreignKeys: [{ target: 'Application', columnNames: ['applicationId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

export interface GroupRow {
  internalId: string;
  applicationId: string;
  externalId: string;
  name: string;
  status: 'active' | 'deleted';
  metadata: Record<string, string | number | boolean>;
  createdAt: Date;
}

export const GroupEntity = new EntitySchema<GroupRow>({
  name: 'Group',
  tableName: 'groups',
  schema: IDENTITY_SCHEMA,
  columns: {
    internalId: { name: 'internal_id', type: 'bigint', primary: true, generated: 'increment' },
    applicationId: { name: 'application_id', type: 'uuid' },
    externalId: { name: 'external_id', type: 'text', collation: 'C' },
    name: { type: 'text' },
    status: { type: 'text', default: 'active' },
    metadata: { type: 'jsonb', default: () => "'{}'" },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
  },
  uniques: [{ name: 'groups_application_external_id_key', columns: ['applicationId', 'externalId'] }],
  foreignKeys: [{ target: 'Application', columnNames: ['applicationId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

export interface GroupMemberRow {
  groupId: string;
  userId: string;
  applicationId: string;
  /** Insertion order, so membership lists come out in the order members were added. */
  addedSeq: string;
}

export const GroupMemberEntity = new EntitySchema<GroupMemberRow>({
  name: 'GroupMember',
  tableName: 'group_members',
  schema: IDENTITY_SCHEMA,
  columns: {
    groupId: { name: 'group_id', type: 'bigint', primary: true },
    userId: { name: 'user_id', type: 'bigint', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    addedSeq: { name: 'added_seq', type: 'bigint', generated: 'increment' },
  },
  indices: [{ name: 'group_members_user_idx', columns: ['userId', 'addedSeq'] }],
  foreignKeys: [
    { target: 'Group', columnNames: ['groupId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' },
    { target: 'User', columnNames: ['userId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' },
  ],
});

export interface SessionRow {
  id: string;
  applicationId: string;
  issuedAt: Date;
  /** null once revoked. */
  expiresAt: Date | null;
}

export const SessionEntity = new EntitySchema<SessionRow>({
  name: 'Session',
  tableName: 'sessions',
  schema: IDENTITY_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    issuedAt: { name: 'issued_at', type: 'timestamptz' },
    expiresAt: { name: 'expires_at', type: 'timestamptz', nullable: true },
  },
  indices: [{ name: 'sessions_application_idx', columns: ['applicationId'] }],
  foreignKeys: [{ target: 'Application', columnNames: ['applicationId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

export type BatchState = 'waiting' | 'active' | 'completed' | 'failed';

/**
 * A POST /v1/batch, recorded before the request answers: its
 * job is queued again from here when Redis lost it, and GET /v1/batch/<jobID> reads its outcome
 * here. Finished rows are pruned after their retention (BATCH_RETENTION_HOURS).
 */
export interface BatchRow {
  /** The job's id, the `jobID` of a 202. */
  jobId: string;
  applicationId: string;
  /**
   * The validated request body, until the batch is finished: it holds users' names and e-mails,
   * which must not outlive their deletion in a batch kept for its outcome.
   */
  payload: Record<string, unknown> | null;
  state: BatchState;
  /** The batch message, once completed. */
  message: string | null;
  /** `{error, message}`, once failed. */
  error: ErrorBody | null;
  createdAt: Date;
  /** When it completed or failed; null while it is still to be applied. */
  finishedAt: Date | null;
}

export const BatchEntity = new EntitySchema<BatchRow>({
  name: 'Batch',
  tableName: 'batches',
  schema: IDENTITY_SCHEMA,
  columns: {
    jobId: { name: 'job_id', type: 'uuid', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    payload: { type: 'jsonb', nullable: true },
    state: { type: 'text', default: 'waiting' },
    message: { type: 'text', nullable: true },
    error: { type: 'jsonb', nullable: true },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
    finishedAt: { name: 'finished_at', type: 'timestamptz', nullable: true },
  },
  // finished_at serves both the unfinished rows (IS NULL) and the pruning of old finished ones.
  indices: [
    { name: 'batches_application_idx', columns: ['applicationId'] },
    { name: 'batches_finished_idx', columns: ['finishedAt'] },
  ],
  checks: [
    { name: 'batches_state_check', expression: `state IN ('waiting', 'active', 'completed', 'failed')` },
    { name: 'batches_finished_check', expression: `(finished_at IS NULL) = (state IN ('waiting', 'active'))` },
    { name: 'batches_payload_check', expression: `(payload IS NULL) = (finished_at IS NOT NULL)` },
  ],
  foreignKeys: [{ target: 'Application', columnNames: ['applicationId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

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

/** Deletions of groups, users and applications, recorded with them for the other services (domain/cascade). */
export const OutboxEntity = outboxEntity(IDENTITY_SCHEMA);

/** The Idempotency-Keys of application creations and batches, stored with the write. */
export const IdempotencyKeyEntity = idempotencyKeyEntity(IDENTITY_SCHEMA);

export const identityEntities = [
  CustomerEntity,
  ApplicationEntity,
  UserEntity,
  GroupEntity,
  GroupMemberEntity,
  SessionEntity,
  BatchEntity,
  OutboxEntity,
  IdempotencyKeyEntity,
  ImportRecordEntity,
  ImportChunkEntity,
  ImportMappingEntity,
];
