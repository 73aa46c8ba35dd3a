/**
 * All SQL of exporting this service's part of a customer dump: one page of one table's rows of one
 * application, in keyset order (internal ids, or the primary key), nothing being purged. Keys and
 * JSON columns travel as text, as the dump writes them.
 */
import { rows, type Queryable } from '@collab/shared';
import type { AttachmentRow, FileRow, MentionRow, MessageRow, ParticipantRow, ReactionRow, ThreadRow } from '../entities/index.js';
import { attachmentsTable, filesTable, mentionsTable, messagesTable, participantsTable, reactionsTable, threadsTable } from './tables.js';

export const exportRepository = {
  async threads(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return rows<
      Pick<ThreadRow, 'externalId' | 'groupId' | 'name' | 'url' | 'extraClassnames' | 'resolvedAt' | 'createdAt'> & {
        ref: string;
        location: string;
        metadata: string;
      }
    >(
      db,
      `SELECT ${threadsTable.text('internalId', 'ref')}, ${threadsTable.pick('externalId', 'groupId', 'name', 'url')},
         ${threadsTable.text('location')}, ${threadsTable.text('metadata')},
         ${threadsTable.pick('extraClassnames', 'resolvedAt', 'createdAt')}
       FROM conversation.threads t WHERE t.application_id = $1 AND t.purging_at IS NULL AND t.internal_id > $2 ORDER BY t.internal_id LIMIT $3`,
      [applicationId, after ?? '0', limit],
    );
  },

  async messages(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return rows<
      Pick<
        MessageRow,
        'externalId' | 'authorId' | 'type' | 'content' | 'url' | 'iconUrl' | 'translationKey' | 'extraClassnames' | 'skipLinkPreviews' | 'createdAt' | 'updatedAt' | 'deletedAt'
      > & { ref: string; threadRef: string; groupId: string; metadata: string }
    >(
      db,
      `SELECT ${messagesTable.text('internalId', 'ref')}, ${messagesTable.pick('externalId')}, ${messagesTable.text('threadRef')},
         ${threadsTable.pick('groupId')}, ${messagesTable.pick('authorId', 'type', 'content', 'url', 'iconUrl', 'translationKey', 'extraClassnames')},
         ${messagesTable.text('metadata')}, ${messagesTable.pick('skipLinkPreviews', 'createdAt', 'updatedAt', 'deletedAt')}
       FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
       WHERE m.application_id = $1 AND m.purging_at IS NULL AND t.purging_at IS NULL AND m.internal_id > $2 ORDER BY m.internal_id LIMIT $3`,
      [applicationId, after ?? '0', limit],
    );
  },

  async reactions(db: Queryable, applicationId: string, after: [string, string, string] | null, limit: number) {
    return rows<Omit<ReactionRow, 'messageRef'> & { messageRef: string }>(
      db,
      `SELECT ${reactionsTable.text('messageRef')}, ${reactionsTable.pick('userId', 'reaction', 'reactedAt')}
       FROM conversation.message_reactions r JOIN conversation.messages m ON m.internal_id = r.message_id
       WHERE m.application_id = $1 AND m.purging_at IS NULL AND (r.message_id, r.user_id, r.reaction) > ($2::bigint, $3, $4)
       ORDER BY r.message_id, r.user_id, r.reaction LIMIT $5`,
      [applicationId, ...(after ?? ['0', '', '']), limit],
    );
  },

  async mentions(db: Queryable, applicationId: string, after: [string, string] | null, limit: number) {
    return rows<Omit<MentionRow, 'messageRef'> & { messageRef: string }>(
      db,
      `SELECT ${mentionsTable.text('messageRef')}, ${mentionsTable.pick('userId')}
       FROM conversation.message_mentions mm JOIN conversation.messages m ON m.internal_id = mm.message_id
       WHERE m.application_id = $1 AND m.purging_at IS NULL AND (mm.message_id, mm.user_id) > ($2::bigint, $3)
       ORDER BY mm.message_id, mm.user_id LIMIT $4`,
      [applicationId, ...(after ?? ['0', '']), limit],
    );
  },

  /** In the order the threads list them (seq), so that an import keeps it. */
  async participants(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return rows<Pick<ParticipantRow, 'seq' | 'userId' | 'lastSeenAt' | 'subscribed'> & { threadRef: string; groupId: string }>(
      db,
      `SELECT ${participantsTable.text('seq')}, ${participantsTable.text('threadRef')}, ${threadsTable.pick('groupId')},
         ${participantsTable.pick('userId', 'lastSeenAt', 'subscribed')}
       FROM conversation.thread_participants p JOIN conversation.threads t ON t.internal_id = p.thread_id
       WHERE t.application_id = $1 AND t.purging_at IS NULL AND p.seq > $2 ORDER BY p.seq LIMIT $3`,
      [applicationId, after ?? '0', limit],
    );
  },

  async files(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return rows<Pick<FileRow, 'id' | 'ownerId' | 'name' | 'mimeType' | 'size' | 'uploadStatus' | 'createdAt'>>(
      db,
      `SELECT ${filesTable.pick('id', 'ownerId', 'name', 'mimeType')}, ${filesTable.text('size')}, ${filesTable.pick('uploadStatus', 'createdAt')}
       FROM conversation.files f WHERE f.application_id = $1 AND f.purging_at IS NULL AND f.id > $2 ORDER BY f.id LIMIT $3`,
      [applicationId, after ?? '00000000-0000-0000-0000-000000000000', limit],
    );
  },

  /** In the order messages list them (seq). */
  async attachments(db: Queryable, applicationId: string, after: string | null, limit: number) {
    return rows<Pick<AttachmentRow, 'seq' | 'fileId'> & Pick<FileRow, 'createdAt'> & { messageRef: string }>(
      db,
      `SELECT ${attachmentsTable.text('seq')}, ${attachmentsTable.text('messageRef')}, ${attachmentsTable.pick('fileId')}, ${filesTable.pick('createdAt')}
       FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id JOIN conversation.messages m ON m.internal_id = a.message_id
       WHERE m.application_id = $1 AND m.purging_at IS NULL AND f.purging_at IS NULL AND a.seq > $2 ORDER BY a.seq LIMIT $3`,
      [applicationId, after ?? '0', limit],
    );
  },

  /** The distinct locations of each group's threads (the original's `pages`). */
  async locations(db: Queryable, applicationId: string, after: [string, string] | null, limit: number) {
    return rows<Pick<ThreadRow, 'groupId'> & { location: string }>(
      db,
      `SELECT ${threadsTable.pick('groupId')}, ${threadsTable.text('location')} FROM conversation.threads t
       WHERE t.application_id = $1 AND t.purging_at IS NULL AND (t.group_id, t.location::text) > ($2, $3)
       GROUP BY t.group_id, t.location::text ORDER BY t.group_id, t.location::text LIMIT $4`,
      [applicationId, ...(after ?? ['', '']), limit],
    );
  },
};
