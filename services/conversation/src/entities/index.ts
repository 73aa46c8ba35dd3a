/**
 * The conversation schema as TypeORM entities. User and group ids are the customer's external ids:
 * those entities belong to identity, and this service never reads identity's tables.
 */
import { applicationPurgeEntity, idempotencyKeyEntity, outboxEntity } from '@collab/shared/storage';
import { AttachmentEntity, FileChunkEntity, FileEntity } from './files.js';
import { LinkPreviewEntity, MentionEntity, MessageEntity, ReactionEntity } from './messages.js';
import { CONVERSATION_SCHEMA } from './schema.js';
import { ParticipantEntity, ThreadEntity } from './threads.js';

export * from './files.js';
export * from './messages.js';
export * from './schema.js';
export * from './threads.js';

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
