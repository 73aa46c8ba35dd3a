/** Threads and their participants. */
import type { Brand } from '@collab/shared';
import { EntitySchema } from 'typeorm';
import { CONVERSATION_SCHEMA, type Flat } from './schema.js';

/**
 * A thread's internal id. Only the threads repository's reads within an application produce one,
 * so a query on a thread's child rows cannot be given an id that was not looked up in the
 * application first.
 */
export type ThreadRef = Brand<'ThreadRef'>;

export interface ThreadRow {
  internalId: ThreadRef;
  applicationId: string;
  externalId: string;
  groupId: string;
  name: string;
  url: string;
  location: Flat;
  metadata: Flat;
  extraClassnames: string | null;
  resolvedAt: Date | null;
  createdAt: Date;
  /** Timestamp of the latest message (any type, deleted included), or the creation time. */
  lastActivityAt: Date;
  /** Set when a deletion cascade reached the thread: invisible at once, removed by a purge job. */
  purgingAt?: Date | null;
}

export const ThreadEntity = new EntitySchema<ThreadRow>({
  name: 'Thread',
  tableName: 'threads',
  schema: CONVERSATION_SCHEMA,
  columns: {
    internalId: { name: 'internal_id', type: 'bigint', primary: true, generated: 'increment' },
    applicationId: { name: 'application_id', type: 'uuid' },
    externalId: { name: 'external_id', type: 'text', collation: 'C' },
    groupId: { name: 'group_id', type: 'text', collation: 'C' },
    name: { type: 'text' },
    url: { type: 'text' },
    location: { type: 'jsonb' },
    metadata: { type: 'jsonb', default: () => "'{}'" },
    extraClassnames: { name: 'extra_classnames', type: 'text', nullable: true },
    resolvedAt: { name: 'resolved_at', type: 'timestamptz', nullable: true },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
    lastActivityAt: { name: 'last_activity_at', type: 'timestamptz', default: () => 'now()' },
    purgingAt: { name: 'purging_at', type: 'timestamptz', nullable: true },
  },
  uniques: [{ name: 'threads_application_external_id_key', columns: ['applicationId', 'externalId'] }],
  indices: [
    { name: 'threads_activity_idx', columns: ['applicationId', 'lastActivityAt', 'externalId'] },
    { name: 'threads_group_idx', columns: ['applicationId', 'groupId'] },
    // GIN (jsonb_path_ops) for the location and metadata filters; created by hand in a migration.
    { name: 'threads_location_idx', columns: ['location'], synchronize: false },
    { name: 'threads_metadata_idx', columns: ['metadata'], synchronize: false },
    { name: 'threads_purging_idx', columns: ['applicationId'], synchronize: false },
  ],
});

export interface ParticipantRow {
  threadRef: ThreadRef;
  userId: string;
  lastSeenAt: Date | null;
  subscribed: boolean;
  /** Creation order of participant records, for stable output order. */
  seq: string;
}

export const ParticipantEntity = new EntitySchema<ParticipantRow>({
  name: 'Participant',
  tableName: 'thread_participants',
  schema: CONVERSATION_SCHEMA,
  columns: {
    threadRef: { name: 'thread_id', type: 'bigint', primary: true },
    userId: { name: 'user_id', type: 'text', primary: true, collation: 'C' },
    lastSeenAt: { name: 'last_seen_at', type: 'timestamptz', nullable: true },
    subscribed: { type: 'boolean', default: false },
    seq: { type: 'bigint', generated: 'increment' },
  },
  indices: [{ name: 'thread_participants_user_idx', columns: ['userId'] }],
  foreignKeys: [{ target: 'Thread', columnNames: ['threadRef'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});
