/**
 * What a message view shows besides the message row, for messages and threads found within their
 * application (MessageRef, ThreadRef).
 */
import type { Queryable } from '@collab/shared';
import type { FileRow, LinkPreviewRow, MessageRef, ParticipantRow, ReactionRow, ThreadRef } from '../entities/index.js';

export interface ViewDetails {
  reactions: ReactionRow[];
  attachments: (FileRow & { messageRef: MessageRef })[];
  previews: LinkPreviewRow[];
  participants: ParticipantRow[];
}
/** A row as the query's JSON brings it: these timestamps as epoch milliseconds. */
type Timed<Row, Key extends keyof Row> = Omit<Row, Key> & { [K in Key]: null extends Row[K] ? number | null : number };
interface ViewDetailsJson {
  reactions: Timed<ReactionRow, 'reactedAt'>[];
  attachments: Timed<FileRow & { messageRef: MessageRef }, 'createdAt'>[];
  previews: LinkPreviewRow[];
  participants: Timed<ParticipantRow, 'lastSeenAt'>[];
}

/** A timestamp column as epoch milliseconds, truncated as pg truncates microseconds. */
const ms = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)`;

/**
 * The repository's statements that the bench's raw-SQL baselines issue too, exported so that
 * they issue the very same text.
 */
export const messageViewsStatements = {
  /** The reactions, attachments and visible previews of the messages $1, and the participants of the threads $2, as JSON. */
  detailsOf: `SELECT
       (SELECT COALESCE(json_agg(json_build_object('messageRef', message_id::text, 'userId', user_id, 'reaction', reaction,
           'reactedAt', ${ms('reacted_at')}) ORDER BY reacted_at, user_id, reaction), '[]')
        FROM conversation.message_reactions WHERE message_id = ANY($1::bigint[])) AS reactions,
       (SELECT COALESCE(json_agg(json_build_object('messageRef', a.message_id::text, 'id', f.id, 'applicationId', f.application_id,
           'ownerId', f.owner_id, 'name', f.name, 'mimeType', f.mime_type, 'size', f.size::text, 'uploadStatus', f.upload_status, 'createdAt', ${ms('f.created_at')})
           ORDER BY a.seq), '[]')
        FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
        WHERE a.message_id = ANY($1::bigint[]) AND f.purging_at IS NULL) AS attachments,
       (SELECT COALESCE(json_agg(json_build_object('id', id, 'messageRef', message_id::text, 'url', url, 'imageUrl', image_url,
           'title', title, 'description', description, 'hidden', hidden, 'seq', seq::text) ORDER BY seq), '[]')
        FROM conversation.message_link_previews WHERE message_id = ANY($1::bigint[]) AND NOT hidden) AS previews,
       (SELECT COALESCE(json_agg(json_build_object('threadRef', thread_id::text, 'userId', user_id, 'lastSeenAt', ${ms('last_seen_at')},
           'subscribed', subscribed, 'seq', seq::text) ORDER BY seq), '[]')
        FROM conversation.thread_participants WHERE thread_id = ANY($2::bigint[])) AS participants`,
};

export const messageViewsRepository = {
  /**
   * What a message view shows besides the message rows, in one round trip: the reactions,
   * attachments and visible link previews of these messages, and the participants of their threads,
   * each in the order the API lists them. Timestamps travel as epoch milliseconds, truncated as pg
   * truncates microseconds, so they equal what the rows' own columns would give.
   */
  async detailsOf(db: Queryable, messages: readonly MessageRef[], threads: readonly ThreadRef[]): Promise<ViewDetails> {
    if (messages.length === 0 && threads.length === 0) return { reactions: [], attachments: [], previews: [], participants: [] };
    const rows: ViewDetailsJson[] = await db.query(
      messageViewsStatements.detailsOf,
      [[...new Set(messages)], [...new Set(threads)]],
    );
    const { reactions, attachments, previews, participants } = rows[0];
    const date = (value: number | null) => (value === null ? null : new Date(value));
    return {
      reactions: reactions.map((row) => ({ ...row, reactedAt: new Date(row.reactedAt) })),
      attachments: attachments.map((row) => ({ ...row, createdAt: new Date(row.createdAt) })),
      previews,
      participants: participants.map((row) => ({ ...row, lastSeenAt: date(row.lastSeenAt) })),
    };
  },
};
