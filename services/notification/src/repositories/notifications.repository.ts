/** All SQL about notifications. Every method takes the application id first. */
import { chunks, columnValue, countAffected, rows, type Queryable } from '@collab/shared';
import type { NotificationRow } from '../entities/index.js';
import { notificationsTable } from './tables.js';

export interface NotificationCursor {
  createdAtMicros: string;
  externalId: string;
}

/**
 * What the conversation service says of the messages notifications point at: a thread action is
 * shown while its action message exists; a reply while its message exists and is not
 * soft-deleted; a reaction while, besides, the message still has that reaction by its sender.
 * Told as the exceptions (the messages asked about that are gone, those soft-deleted) because a
 * recipient's every message is asked about and nearly all of them are shown: the statements then
 * carry a few references rather than all of them.
 */
export interface Visibility {
  goneMessages: string[];
  deletedMessages: string[];
  reactions: { messageRef: string; userId: string; reaction: string }[];
}

/**
 * An item of a recipient's list: a row, or the newest of the rows that aggregate (a message's
 * reactions), with the distinct senders of them all, the most recent first.
 */
export type NotificationItemRow = NotificationRow & { senders: string[] };

/**
 * The recipient's visible rows (`visible`) and their items (`items`, one per aggregation key or
 * row, represented by its newest row), as SQL CTEs; adds their parameters after `$1` (application)
 * and `$2` (recipient).
 */
function itemsCte(params: unknown[], visibility: Visibility): string {
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const gone = param(visibility.goneMessages);
  const hidden = param([...visibility.goneMessages, ...visibility.deletedMessages]);
  const [reactionMessages, reactionUsers, reactions] = [
    param(visibility.reactions.map((reaction) => reaction.messageRef)),
    param(visibility.reactions.map((reaction) => reaction.userId)),
    param(visibility.reactions.map((reaction) => reaction.reaction)),
  ];
  return `WITH visible AS (
      SELECT ${notificationsTable.select} FROM notification.notifications n
      WHERE n.application_id = $1 AND n.recipient_id = $2 AND n.purging_at IS NULL AND (
        n.kind = 'external'
        OR (n.kind = 'thread_action' AND n.message_ref <> ALL(${gone}::text[]))
        OR (n.kind = 'reply' AND n.message_ref <> ALL(${hidden}::text[]))
        OR (n.kind = 'reaction' AND (n.message_ref, n.actor_id, n.reaction) IN (
          SELECT * FROM unnest(${reactionMessages}::text[], ${reactionUsers}::text[], ${reactions}::text[]))))
    ),
    items AS (
      SELECT DISTINCT ON (COALESCE(v."aggregationKey", v."externalId")) v.* FROM visible v
      ORDER BY COALESCE(v."aggregationKey", v."externalId"), v."createdAt" DESC, v."externalId" ASC
    )`;
}

/** The item's senders: its row's, or the distinct senders of its aggregated rows, most recent first. */
const SENDERS = `CASE WHEN i."aggregationKey" IS NULL THEN ARRAY[i."actorId"] ELSE ARRAY(
    SELECT s."actorId" FROM visible s WHERE s."aggregationKey" = i."aggregationKey"
    GROUP BY s."actorId" ORDER BY max(s."createdAt") DESC, s."actorId") END AS senders`;

export type NewNotification = Pick<NotificationRow, 'externalId' | 'kind' | 'recipientId' | 'actorId'> &
  Partial<Omit<NotificationRow, 'internalId' | 'applicationId' | 'readStatus' | 'createdAt' | 'purgingAt'>>;

/** The fields an insert writes, in the order of its column list (every other column takes its default). */
const INSERTED: (keyof NewNotification & keyof typeof notificationsTable.columns)[] = [
  'externalId',
  'kind',
  'recipientId',
  'actorId',
  'template',
  'url',
  'messageRef',
  'threadRef',
  'replyActions',
  'threadActionType',
  'reaction',
  'aggregationKey',
  'sourceId',
  'iconUrl',
  'extraClassnames',
  'metadata',
];

/** Rows per INSERT: 16 parameters each, well under PostgreSQL's 65,535 per statement. */
const INSERT_CHUNK_ROWS = 1000;

/**
 * Inserts the rows (one per recipient of each message of a relayed batch, possibly thousands, in
 * statements of INSERT_CHUNK_ROWS); a row whose source and recipient are taken already is skipped.
 * Returns the rows inserted: their internal ids and the entries that caused them.
 */
async function insertRows(db: Queryable, applicationId: string, news: readonly NewNotification[]): Promise<{ internalId: string; sourceId: string | null }[]> {
  const inserted: { internalId: string; sourceId: string | null }[] = [];
  let position = 0;
  for (const chunk of chunks(news, INSERT_CHUNK_ROWS)) {
    const params: unknown[] = [applicationId];
    const values = chunk.map((row) => {
      const placeholders = INSERTED.map((field) => {
        const { type } = notificationsTable.columns[field];
        params.push(columnValue(type, row[field] ?? (field === 'metadata' ? {} : null)));
        return `$${params.length}::${type}`;
      });
      // A batch's rows are created in the order given, a microsecond apart: lists are newest first,
      // and one transaction's now() would otherwise leave a batch ordered by its random ids.
      return `($1, ${placeholders.join(', ')}, now() + ${position++} * interval '1 microsecond')`;
    });
    inserted.push(
      ...(await rows<{ internalId: string; sourceId: string | null }>(
        db,
        `INSERT INTO notification.notifications AS n (application_id, ${INSERTED.map((field) => notificationsTable.columns[field].column).join(', ')}, created_at)
         VALUES ${values.join(', ')}
         ON CONFLICT (application_id, source_id, recipient_id) DO NOTHING
         RETURNING ${notificationsTable.pick('internalId', 'sourceId')}`,
        params,
      )),
    );
  }
  return inserted;
}

export const notificationsRepository = {
  insert: insertRows,

  /** A notification by internal id, unless a cascade reached it. */
  async find(db: Queryable, applicationId: string, internalId: string): Promise<NotificationRow | null> {
    const [row] = await rows<NotificationRow>(
      db,
      `SELECT ${notificationsTable.select} FROM notification.notifications n WHERE n.application_id = $1 AND n.internal_id = $2 AND n.purging_at IS NULL`,
      [applicationId, internalId],
    );
    return row ?? null;
  },

  /** The messages the recipient's notifications point at. */
  async messageRefsOf(db: Queryable, applicationId: string, recipientId: string): Promise<string[]> {
    const refs = await rows<Pick<NotificationRow, 'messageRef'>>(
      db,
      `SELECT DISTINCT ${notificationsTable.pick('messageRef')} FROM notification.notifications n
       WHERE n.application_id = $1 AND n.recipient_id = $2 AND n.message_ref IS NOT NULL AND n.purging_at IS NULL`,
      [applicationId, recipientId],
    );
    return refs.map((row) => row.messageRef!);
  },

  /** The recipient's visible items, newest first, ties by id, strictly after the cursor. */
  async itemsPage(
    db: Queryable,
    applicationId: string,
    recipientId: string,
    visibility: Visibility,
    page: { after: NotificationCursor | null; limit: number },
  ): Promise<(NotificationItemRow & { cursor: string })[]> {
    const params: unknown[] = [applicationId, recipientId];
    const items = itemsCte(params, visibility);
    let keyset = '';
    if (page.after) {
      params.push(page.after.createdAtMicros, page.after.externalId);
      const ts = `($${params.length - 1}::timestamp AT TIME ZONE 'UTC')`;
      keyset = `WHERE i."createdAt" < ${ts} OR (i."createdAt" = ${ts} AND i."externalId" > $${params.length})`;
    }
    params.push(page.limit);
    return rows<NotificationItemRow & { cursor: string }>(
      db,
      `${items}
       SELECT i.*, ${SENDERS}, to_char(i."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS cursor
       FROM items i ${keyset}
       ORDER BY i."createdAt" DESC, i."externalId" ASC LIMIT $${params.length}`,
      params,
    );
  },

  /** Visible items with at least one unread row (an aggregated item counts once). */
  async countUnreadItems(db: Queryable, applicationId: string, recipientId: string, visibility: Visibility): Promise<number> {
    const params: unknown[] = [applicationId, recipientId];
    const [{ count }] = await rows<{ count: number }>(
      db,
      `${itemsCte(params, visibility)}
       SELECT count(*)::int AS count FROM items i WHERE EXISTS (
         SELECT 1 FROM visible v WHERE COALESCE(v."aggregationKey", v."externalId") = COALESCE(i."aggregationKey", i."externalId")
           AND v."readStatus" = 'unread')`,
      params,
    );
    return count;
  },

  async countItems(db: Queryable, applicationId: string, recipientId: string, visibility: Visibility): Promise<number> {
    const params: unknown[] = [applicationId, recipientId];
    const [{ count }] = await rows<{ count: number }>(db, `${itemsCte(params, visibility)} SELECT count(*)::int AS count FROM items`, params);
    return count;
  },

  /** The item that shows this row, or null when the row is not visible (or gone). */
  async itemOf(db: Queryable, applicationId: string, row: NotificationRow, visibility: Visibility): Promise<NotificationItemRow | null> {
    const params: unknown[] = [applicationId, row.recipientId];
    const items = itemsCte(params, visibility);
    params.push(row.internalId);
    const [item] = await rows<NotificationItemRow>(
      db,
      `${items}
       SELECT i.*, ${SENDERS} FROM items i
       WHERE COALESCE(i."aggregationKey", i."externalId") =
         (SELECT COALESCE(v."aggregationKey", v."externalId") FROM visible v WHERE v."internalId" = $${params.length})`,
      params,
    );
    return item ?? null;
  },

  /**
   * Deletes a notification, with the rows aggregated into the same item (its recipient sees them
   * as one); returns whether anything was deleted.
   */
  async delete(db: Queryable, applicationId: string, externalId: string): Promise<boolean> {
    const deleted = await countAffected(
      db,
      `DELETE FROM notification.notifications n USING notification.notifications named
       WHERE named.application_id = $1 AND named.external_id = $2 AND named.purging_at IS NULL
         AND n.application_id = $1 AND n.recipient_id = named.recipient_id AND n.purging_at IS NULL
         AND (n.internal_id = named.internal_id OR n.aggregation_key = named.aggregation_key)`,
      [applicationId, externalId],
    );
    return deleted > 0;
  },
};
