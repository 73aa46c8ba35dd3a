/** Messages and what hangs off one: reactions, mentions and link previews. */
import type { Brand } from '@collab/shared';
import { EntitySchema } from 'typeorm';
import { CONVERSATION_SCHEMA, type Flat } from './schema.js';
import type { ThreadRef } from './threads.js';

/**
 * A message's internal id. Only the messages repository's reads within an application produce one,
 * so a query on a message's child rows cannot be given an id that was not looked up in the
 * application first.
 */
export type MessageRef = Brand<'MessageRef'>;

export interface MessageRow {
  internalId: MessageRef;
  applicationId: string;
  externalId: string;
  threadRef: ThreadRef;
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
    threadRef: { name: 'thread_id', type: 'bigint' },
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
    { name: 'messages_thread_created_idx', columns: ['threadRef', 'createdAt'] },
    { name: 'messages_application_created_idx', columns: ['applicationId', 'createdAt', 'externalId'] },
    { name: 'messages_author_idx', columns: ['applicationId', 'authorId'] },
    { name: 'messages_metadata_idx', columns: ['metadata'], synchronize: false },
    { name: 'messages_purging_idx', columns: ['applicationId'], synchronize: false },
    // Thread statistics read counts and each replier's first message from this index alone.
    { name: 'messages_thread_stats_idx', columns: ['threadRef', 'type', 'authorId', 'createdAt', 'internalId'], synchronize: false },
  ],
  foreignKeys: [{ target: 'Thread', columnNames: ['threadRef'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

export interface ReactionRow {
  messageRef: MessageRef;
  userId: string;
  reaction: string;
  reactedAt: Date;
}

export const ReactionEntity = new EntitySchema<ReactionRow>({
  name: 'Reaction',
  tableName: 'message_reactions',
  schema: CONVERSATION_SCHEMA,
  columns: {
    messageRef: { name: 'message_id', type: 'bigint', primary: true },
    userId: { name: 'user_id', type: 'text', primary: true, collation: 'C' },
    reaction: { type: 'text', primary: true },
    reactedAt: { name: 'reacted_at', type: 'timestamptz' },
  },
  indices: [{ name: 'message_reactions_user_idx', columns: ['userId'] }],
  foreignKeys: [{ target: 'Message', columnNames: ['messageRef'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

export interface MentionRow {
  messageRef: MessageRef;
  userId: string;
}

export const MentionEntity = new EntitySchema<MentionRow>({
  name: 'Mention',
  tableName: 'message_mentions',
  schema: CONVERSATION_SCHEMA,
  columns: {
    messageRef: { name: 'message_id', type: 'bigint', primary: true },
    userId: { name: 'user_id', type: 'text', primary: true, collation: 'C' },
  },
  indices: [{ name: 'message_mentions_user_idx', columns: ['userId'] }],
  foreignKeys: [{ target: 'Message', columnNames: ['messageRef'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});

/**
 * A link preview of a message: the page a URL of its content points to, fetched by the
 * conversation-link-previews job. One row per (message, URL), the URL as the content gives it
 * with `http://` added when it has no scheme; `seq` keeps the order they were stored in.
 */
export interface LinkPreviewRow {
  id: string;
  messageRef: MessageRef;
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
    messageRef: { name: 'message_id', type: 'bigint' },
    url: { type: 'text' },
    imageUrl: { name: 'image_url', type: 'text', nullable: true },
    title: { type: 'text', nullable: true },
    description: { type: 'text', nullable: true },
    hidden: { type: 'boolean', default: false },
    seq: { type: 'bigint', generated: 'increment' },
  },
  // Also the index of a message's previews (its leading column).
  uniques: [{ name: 'message_link_previews_message_url_key', columns: ['messageRef', 'url'] }],
  foreignKeys: [{ target: 'Message', columnNames: ['messageRef'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' }],
});
