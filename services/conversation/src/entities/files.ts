/** Uploaded files, their bytes and their attachment to messages. */
import type { Brand } from '@collab/shared';
import { EntitySchema } from 'typeorm';
import type { MessageRef } from './messages.js';
import { CONVERSATION_SCHEMA } from './schema.js';

/**
 * A file's id as this service holds it: only the files repository's insert for an application and
 * its tenant-scoped reads produce one, so a write to a file or its bytes cannot be given an id
 * that was not created or looked up in the application first.
 */
export type FileRef = Brand<'FileRef'>;

export interface FileRow {
  id: FileRef;
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
  messageRef: MessageRef;
  fileId: string;
  seq: string;
}

export const AttachmentEntity = new EntitySchema<AttachmentRow>({
  name: 'Attachment',
  tableName: 'message_attachments',
  schema: CONVERSATION_SCHEMA,
  columns: {
    messageRef: { name: 'message_id', type: 'bigint', primary: true },
    fileId: { name: 'file_id', type: 'uuid', primary: true },
    seq: { type: 'bigint', generated: 'increment' },
  },
  indices: [{ name: 'message_attachments_file_idx', columns: ['fileId'] }],
  foreignKeys: [
    { target: 'Message', columnNames: ['messageRef'], referencedColumnNames: ['internalId'], onDelete: 'CASCADE' },
    { target: 'File', columnNames: ['fileId'], referencedColumnNames: ['id'], onDelete: 'CASCADE' },
  ],
});
