/**
 * The identity schema as TypeORM entities. They describe the tables the migrations create (a test
 * checks that generating a migration from them yields nothing); queries live in repositories.
 * The batch, import, preference and presence records are in files named by their topic (as in
 * every service: a topic that grows leaves index.ts for its own file); this one lists them all.
 */
import type { WebhookEventType } from '@collab/shared';
import { idempotencyKeyEntity, outboxEntity } from '@collab/shared/storage';
import { EntitySchema } from 'typeorm';
import { BatchEntity } from './batch.js';
import { ImportChunkEntity, ImportFileChunkEntity, ImportMappingEntity, ImportRecordEntity } from './imports.js';
import { UserPreferencesEntity } from './preferences.js';
import { DurablePresenceEntity } from './presence.js';
import { IDENTITY_SCHEMA } from './schema.js';

export { IDENTITY_SCHEMA } from './schema.js';
export * from './batch.js';
export * from './imports.js';
export * from './preferences.js';
export * from './presence.js';

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
  eventWebhookSubscriptions: WebhookEventType[] | null;
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

/** Deletions of groups, users and applications, recorded with them for the other services (domain/events). */
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
  ImportFileChunkEntity,
  ImportMappingEntity,
  UserPreferencesEntity,
  DurablePresenceEntity,
];
