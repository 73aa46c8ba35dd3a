/** Files attached to a message, reached only through a message found within its application (a MessageRef). */
import { rows, type Queryable } from '@collab/shared';
import type { AttachmentRow, FileRow, MessageRef } from '../entities/index.js';
import { attachmentsTable, filesTable } from './tables.js';


export const attachmentsRepository = {
  /** The files attached to these messages, each with its attachment, in the order they were attached. */
  async of(db: Queryable, messages: readonly MessageRef[]): Promise<(AttachmentRow & FileRow)[]> {
    if (messages.length === 0) return [];
    return rows<AttachmentRow & FileRow>(
      db,
      `SELECT ${attachmentsTable.select}, ${filesTable.select}
       FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
       WHERE a.message_id = ANY($1::bigint[]) AND f.purging_at IS NULL ORDER BY a.seq`,
      [[...new Set(messages)]],
    );
  },

  /** Attaches in the order given (the attachments' order is their `seq`). */
  async attach(db: Queryable, message: MessageRef, fileIds: readonly string[]): Promise<void> {
    if (fileIds.length === 0) return;
    await db.query(
      `INSERT INTO conversation.message_attachments (message_id, file_id)
       SELECT $1, file_id FROM unnest($2::uuid[]) WITH ORDINALITY AS input(file_id, position) ORDER BY position`,
      [message, [...fileIds]],
    );
  },

  async detach(db: Queryable, message: MessageRef, fileIds: readonly string[]): Promise<void> {
    if (fileIds.length === 0) return;
    await db.query(`DELETE FROM conversation.message_attachments WHERE message_id = $1 AND file_id = ANY($2::uuid[])`, [
      message,
      [...fileIds],
    ]);
  },
};
