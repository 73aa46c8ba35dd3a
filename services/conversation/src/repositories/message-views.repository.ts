/**
 * What a message view shows besides the message row, for messages and threads found within their
 * application (MessageRef, ThreadRef).
 */
import { rows, type ColumnMap, type Queryable } from '@collab/shared';
import type { AttachmentRow, FileRow, LinkPreviewRow, MessageRef, ParticipantRow, ReactionRow, ThreadRef } from '../entities/index.js';
import { attachmentsTable, filesTable, participantsTable, previewsTable, reactionsTable } from './tables.js';

export interface ViewDetails {
  reactions: ReactionRow[];
  attachments: (AttachmentRow & FileRow)[];
  previews: LinkPreviewRow[];
  participants: ParticipantRow[];
}

interface Table<Row> {
  alias: string;
  columns: ColumnMap<Row>;
}

/** A timestamp column as epoch milliseconds, truncated as pg truncates microseconds. */
const ms = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)`;

/**
 * The `json_build_object` arguments of the tables' rows: every field under its name, bigints as
 * text (as pg answers them) and timestamps as epoch milliseconds (see datesOf).
 */
function jsonFields(...tables: Table<unknown>[]): string {
  return tables
    .flatMap(({ alias, columns }) =>
      Object.entries<{ column: string; type: string }>(columns).map(([field, { column, type }]) => {
        const value = `${alias}.${column}`;
        return `'${field}', ${type === 'bigint' ? `${value}::text` : type === 'timestamptz' ? ms(value) : value}`;
      }),
    )
    .join(', ');
}

/** A row as jsonFields built it, with its timestamps as dates again. */
function datesOf<Row>(row: Record<string, unknown>, ...tables: Table<unknown>[]): Row {
  for (const { columns } of tables)
    for (const [field, { type }] of Object.entries<{ column: string; type: string }>(columns))
      if (type === 'timestamptz' && row[field] !== null) row[field] = new Date(row[field] as number);
  return row as Row;
}

/**
 * The repository's statements that the bench's raw-SQL baselines issue too, exported so that
 * they issue the very same text.
 */
export const messageViewsStatements = {
  /** The reactions, attachments and visible previews of the messages $1, and the participants of the threads $2, as JSON. */
  detailsOf: `SELECT
       (SELECT COALESCE(json_agg(json_build_object(${jsonFields(reactionsTable)}) ORDER BY r.reacted_at, r.user_id, r.reaction), '[]')
        FROM conversation.message_reactions r WHERE r.message_id = ANY($1::bigint[])) AS reactions,
       (SELECT COALESCE(json_agg(json_build_object(${jsonFields(attachmentsTable, filesTable)}) ORDER BY a.seq), '[]')
        FROM conversation.message_attachments a JOIN conversation.files f ON f.id = a.file_id
        WHERE a.message_id = ANY($1::bigint[]) AND f.purging_at IS NULL) AS attachments,
       (SELECT COALESCE(json_agg(json_build_object(${jsonFields(previewsTable)}) ORDER BY lp.seq), '[]')
        FROM conversation.message_link_previews lp WHERE lp.message_id = ANY($1::bigint[]) AND NOT lp.hidden) AS previews,
       (SELECT COALESCE(json_agg(json_build_object(${jsonFields(participantsTable)}) ORDER BY p.seq), '[]')
        FROM conversation.thread_participants p WHERE p.thread_id = ANY($2::bigint[])) AS participants`,
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
    const [details] = await rows<Record<keyof ViewDetails, Record<string, unknown>[]>>(db, messageViewsStatements.detailsOf, [
      [...new Set(messages)],
      [...new Set(threads)],
    ]);
    return {
      reactions: details.reactions.map((row) => datesOf<ReactionRow>(row, reactionsTable)),
      attachments: details.attachments.map((row) => datesOf<AttachmentRow & FileRow>(row, attachmentsTable, filesTable)),
      previews: details.previews.map((row) => datesOf<LinkPreviewRow>(row, previewsTable)),
      participants: details.participants.map((row) => datesOf<ParticipantRow>(row, participantsTable)),
    };
  },
};
