/**
 * The conversation schema as TypeORM entities. User and group ids are the customer's external ids:
 * those entities belong to identity, and this service never reads identity's tables.
 */
import { applicationPurgeEntity, idempotencyKeyEntity, outboxEntity } from '@collab/shared/storage';
import { EntitySchema } from 'typeorm';

export const CONVERSATION_SCHEMA = 'conversation';

type Flat = Record<string, string | number | boolean>;

export interface ThreadRow {
  internalId: string;
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

export interface MessageRow {
  internalId: string;
  applicationId: string;
  externalId: string;
  threadId: string;
  authorId: string;
  type: 'action_message' | 'user_message';
  content: unknown[];
  url: string | null;
  iconUrl: string | null;
  translationKey: string | null;
  extraClassnames: string | null;
  metadata: Flat;
  skipLinkPreviews: boolean;
  createdAt: Date;
  updatedAt: Date | null;
  deletedAt: Date | null;
  purgingAt?: Date | null;
}

export const MessageEntity = new EntitySchema<MessageRow>({
  name: 'Message',
  tableName: 'messages',
  schema: CONVERSATION_SCHEMA,
  columns: {
    internalId: { name: 'internal_id', type: 'bigint', primary: true, generated: 'increment' },
    applicationId: { name: 'application_id', type: 'uuid' },
    externalId: { name: 'external_id', type: 'text', collation: 'C' },
    threadId: { name: 'thread_id', type: 'bigint' },
    authorId: { name: 'author_id', type: 'text', collation: 'C' },
    type: { type: 'text', default: 'user_message' },
    content: { type: 'jsonb' },
    url: { type: 'text', nullable: true },
    iconUrl: { name: 'icon_url', type: 'text', nullable: true },
    translationKey: { name: 'translation_key', type: 'text', nullable: true },
    extraClassnames: { name: 'extra_classnames', type: 'text', nullable: true },
    metadata: { type: 'jsonb', default: () => "'{}'" },
    skipLinkPreviews: { name: 'skip_link_previews', type: 'boolean', default: false },
    createdAt: { name: 'created_at', type: 'timestamptz' },
    updatedAt: { name: 'updated_at', type: 'timestamptz', nullable: true },
    deletedAt: { name: 'deleted_at', type: 'timestamptz', nullable: true },
    purgingAt: { name: 'purging_at', type: 'timestamptz', nullable: true },
  },
  uniques: [{ name: 'messages_application_external_id_key', columns: ['applicationId', 'externalId'] }],
  indices: [
    { name: 'messages_thread_created_idx', columns: ['threadId', 'createdAt'] },
    { name: 'messages_application_created_idx', columns: ['applicationId', 'createdAt', 'externalId'] },
    { name: 'messages_author_idx', columns: ['applicationId', 'authorId'] },
    { name: 'messages_metadata_idx', columns: ['metadata'], synchronize: false },
    { name: 'messages_purging_idx', columns: ['applicationId'], synchronize: false },
  ],
  foreignKeys: [{ target: 'Thread', columnNames: ['threadId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

export interface ReactionRow {
  messageId: string;
  userId: string;
  reaction: string;
  reactedAt: Date;
}

export const ReactionEntity = new EntitySchema<ReactionRow>({
  name: 'Reaction',
  tableName: 'message_reactions',
  schema: CONVERSATION_SCHEMA,
  columns: {
    messageId: { name: 'message_id', type: 'bigint', primary: true },
    userId: { name: 'user_id', type: 'text', primary: true, collation: 'C' },
    reaction: { type: 'text', primary: true },
    reactedAt: { name: 'reacted_at', type: 'timestamptz' },
  },
  indices: [{ name: 'message_reactions_user_idx', columns: ['userId'] }],
  foreignKeys: [{ target: 'Message', columnNames: ['messageId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

export interface MentionRow {
  messageId: string;
  userId: string;
}

export const MentionEntity = new EntitySchema<MentionRow>({
  name: 'Mention',
  tableName: 'message_mentions',
  schema: CONVERSATION_SCHEMA,
  columns: {
    messageId: { name: 'message_id', type: 'bigint', primary: true },
    userId: { name: 'user_id', type: 'text', primary: true, collation: 'C' },
  },
  indices: [{ name: 'message_mentions_user_idx', columns: ['userId'] }],
  foreignKeys: [{ target: 'Message', columnNames: ['messageId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

export interface ParticipantRow {
  threadId: string;
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
    threadId: { name: 'thread_id', type: 'bigint', primary: true },
    userId: { name: 'user_id', type: 'text', primary: true, collation: 'C' },
    lastSeenAt: { name: 'last_seen_at', type: 'timestamptz', nullable: true },
    subscribed: { type: 'boolean', default: false },
    seq: { type: 'bigint', generated: 'increment' },
  },
  indices: [{ name: 'thread_participants_user_idx', columns: ['userId'] }],
  foreignKeys: [{ target: 'Thread', columnNames: ['threadId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

export interface FileRow {
  id: string;
  applicationId: string;
  ownerId: string;
  name: string;
  mimeType: string;
  size: string;
  /** `uploaded` for every file uploaded here; an imported file whose bytes were not given is `failed`. */
  uploadStatus: UploadStatus;
  createdAt: Date;
  purgingAt?: Date | null;
}

export type UploadStatus = 'uploading' | 'uploaded' | 'failed' | 'cancelled';

export const FileEntity = new EntitySchema<FileRow>({
  name: 'File',
  tableName: 'files',
  schema: CONVERSATION_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    ownerId: { name: 'owner_id', type: 'text', collation: 'C' },
    name: { type: 'text' },
    mimeType: { name: 'mime_type', type: 'text' },
    size: { type: 'bigint' },
    uploadStatus: { name: 'upload_status', type: 'text', default: 'uploaded' },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
    purgingAt: { name: 'purging_at', type: 'timestamptz', nullable: true },
  },
  indices: [
    { name: 'files_owner_idx', columns: ['applicationId', 'ownerId'] },
    { name: 'files_purging_idx', columns: ['applicationId'], synchronize: false },
  ],
});

/** File bytes in chunks of at most 1 MiB, so uploads and downloads stream. */
export interface FileChunkRow {
  fileId: string;
  seq: number;
  data: Buffer;
}

export const FileChunkEntity = new EntitySchema<FileChunkRow>({
  name: 'FileChunk',
  tableName: 'file_chunks',
  schema: CONVERSATION_SCHEMA,
  columns: {
    fileId: { name: 'file_id', type: 'uuid', primary: true },
    seq: { type: 'integer', primary: true },
    data: { type: 'bytea' },
  },
  foreignKeys: [{ target: 'File', columnNames: ['fileId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' }],
});

export interface AttachmentRow {
  messageId: string;
  fileId: string;
  seq: string;
}

export const AttachmentEntity = new EntitySchema<AttachmentRow>({
  name: 'Attachment',
  tableName: 'message_attachments',
  schema: CONVERSATION_SCHEMA,
  columns: {
    messageId: { name: 'message_id', type: 'bigint', primary: true },
    fileId: { name: 'file_id', type: 'uuid', primary: true },
    seq: { type: 'bigint', generated: 'increment' },
  },
  indices: [{ name: 'message_attachments_file_idx', columns: ['fileId'] }],
  foreignKeys: [
    { target: 'Message', columnNames: ['messageId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' },
    { target: 'File', columnNames: ['fileId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' },
  ],
});

/**
 * A link preview of a message: the page a URL of its content points to, fetched by the
 * conversation-link-previews job. One row per (message, URL), the URL as the content gives it
 * with `http://` added when it has no scheme; `seq` keeps the order they were stored in.
 */
export interface LinkPreviewRow {
  id: string;
  messageId: string;
  url: string;
  imageUrl: string | null;
  title: string | null;
  description: string | null;
  hidden: boolean;
  seq: string;
}

export const LinkPreviewEntity = new EntitySchema<LinkPreviewRow>({
  name: 'LinkPreview',
  tableName: 'message_link_previews',
  schema: CONVERSATION_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    messageId: { name: 'message_id', type: 'bigint' },
    url: { type: 'text' },
    imageUrl: { name: 'image_url', type: 'text', nullable: true },
    title: { type: 'text', nullable: true },
    description: { type: 'text', nullable: true },
    hidden: { type: 'boolean', default: false },
    seq: { type: 'bigint', generated: 'increment' },
  },
  // Also the index of a message's previews (its leading column).
  uniques: [{ name: 'message_link_previews_message_url_key', columns: ['messageId', 'url'] }],
  foreignKeys: [{ target: 'Message', columnNames: ['messageId'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

/** Application deletions that reached this service, kept until their purge job removed everything. */
export const ApplicationPurgeEntity = applicationPurgeEntity(CONVERSATION_SCHEMA);

/** Events recorded with the change that causes them, relayed by the conversation worker. */
export const OutboxEntity = outboxEntity(CONVERSATION_SCHEMA);

/** The Idempotency-Keys of message creations and file uploads, stored with the write. */
export const IdempotencyKeyEntity = idempotencyKeyEntity(CONVERSATION_SCHEMA);

export const conversationEntities = [
  ThreadEntity,
  MessageEntity,
  ReactionEntity,
  MentionEntity,
  ParticipantEntity,
  FileEntity,
  FileChunkEntity,
  AttachmentEntity,
  LinkPreviewEntity,
  ApplicationPurgeEntity,
  OutboxEntity,
  IdempotencyKeyEntity,
];
