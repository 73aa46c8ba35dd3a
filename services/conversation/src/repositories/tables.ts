/**
 * The column map of every conversation table, taken from its entity: a row's fields are read
 * (`select`) and written (`write`) through these, so that a column is named once, in its entity.
 */
import { entityColumns, sqlTable } from '@collab/shared';
import {
  AttachmentEntity,
  FileChunkEntity,
  FileEntity,
  LinkPreviewEntity,
  MentionEntity,
  MessageEntity,
  ParticipantEntity,
  ReactionEntity,
  ThreadEntity,
} from '../entities/index.js';

export const threadsTable = sqlTable('conversation.threads', 't', entityColumns(ThreadEntity));
export const participantsTable = sqlTable('conversation.thread_participants', 'p', entityColumns(ParticipantEntity));
export const messagesTable = sqlTable('conversation.messages', 'm', entityColumns(MessageEntity));
export const reactionsTable = sqlTable('conversation.message_reactions', 'r', entityColumns(ReactionEntity));
export const mentionsTable = sqlTable('conversation.message_mentions', 'mm', entityColumns(MentionEntity));
export const previewsTable = sqlTable('conversation.message_link_previews', 'lp', entityColumns(LinkPreviewEntity));
export const filesTable = sqlTable('conversation.files', 'f', entityColumns(FileEntity));
export const chunksTable = sqlTable('conversation.file_chunks', 'c', entityColumns(FileChunkEntity));
export const attachmentsTable = sqlTable('conversation.message_attachments', 'a', entityColumns(AttachmentEntity));
