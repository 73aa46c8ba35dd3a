/** All SQL about notifications. Every method takes the application id first. */
import { chunks, countAffected, type Queryable as Db } from '@collab/shared';
import type { NotificationRow } from '../entities/index.js';

const COLUMNS = `n.internal_id AS "internalId", n.application_id AS "applicationId", n.external_id AS "externalId", n.kind,
  n.recipient_id AS "recipientId", n.actor_id AS "actorId", n.template, n.url, n.message_ref AS "messageRef",
  n.thread_ref AS "threadRef", n.reply_actions AS "replyActions", n.thread_action_type AS "threadActionType", n.reaction,
  n.aggregation_key AS "aggregationKey", n.source_id AS "sourceId", n.icon_url AS "iconUrl",
  n.extra_classnames AS "extraClassnames", n.metadata, n.read_status AS "readStatus", n.created_at AS "createdAt"`;

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
      SELECT ${COLUMNS} FROM notification.notifications n
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

/** Insertable columns, in the order of the INSERT statement. */
const INSERT_COLUMNS: [keyof NewNotification, string][] = [
  ['externalId', 'external_id'],
  ['kind', 'kind'],
  ['recipientId', 'recipient_id'],
  ['actorId', 'actor_id'],
  ['template', 'template'],
  ['url', 'url'],
  ['messageRef', 'message_ref'],
  ['threadRef', 'thread_ref'],
  ['replyActions', 'reply_actions'],
  ['threadActionType', 'thread_action_type'],
  ['reaction', 'reaction'],
  ['aggregationKey', 'aggregation_key'],
  ['sourceId', 'source_id'],
  ['iconUrl', 'icon_url'],
  ['extraClassnames', 'extra_classnames'],
  ['metadata', 'metadata'],
];
const JSON_COLUMNS = new Set<keyof NewNotification>(['replyActions', 'metadata']);

/** Rows per INSERT: 16 parameters each, well under PostgreSQL's 65,535 per statement. */
const INSERT_CHUNK_ROWS = 1000;

/**
 * Inserts the rows (one per recipient of each message of a relayed batch, possibly thousands, in
 * statements of INSERT_CHUNK_ROWS); a row whose source and recipient are taken already is skipped.
 * Returns the rows inserted: their internal ids and the entries that caused them.
 */
async function insertRows(db: Db, applicationId: string, rows: readonly NewNotification[]): Promise<{ internalId: string; sourceId: string | null }[]> {
  const inserted: { internalId: string; sourceId: string | null }[] = [];
  for (const chunk of chunks(rows, INSERT_CHUNK_ROWS)) {
    const params: unknown[] = [applicationId];
    const values = chunk.map((row) => {
      const placeholders = INSERT_COLUMNS.map(([key]) => {
        const value = row[key] ?? (key === 'metadata' ? {} : null);
        params.push(JSON_COLUMNS.has(key) && value !== null ? JSON.stringify(value) : value);
        return `$${params.length}`;
      });
      return `($1, ${placeholders.join(', ')})`;
    });
    inserted.push(
      ...(await db.query(
        `INSERT INTO notification.notifications (application_id, ${INSERT_COLUMNS.map(([, column]) => column).join(', ')})
         VALUES ${values.join(', ')}
         ON CONFLICT (application_id, source_id, recipient_id) DO NOTHING
         RETURNING internal_id AS "internalId", source_id AS "sourceId"`,
        params,
      )),
    );
  }
  return inserted;
}

export const notificationsRepository = {
  insert: insertRows,

  /** A notification by internal id, unless a cascade reached it. */
  async find(db: Db, applicationId: string, internalId: string): Promise<NotificationRow | null> {
    const rows: NotificationRow[] = await db.query(
      `SELECT ${COLUMNS} FROM notification.notifications n WHERE n.application_id = $1 AND n.internal_id = $2 AND n.purging_at IS NULL`,
      [applicationId, internalId],
    );
    return rows[0] ?? null;
  },

  /** The messages the recipient's notifications point at. */
  async messageRefsOf(db: Db, applicationId: string, recipientId: string): Promise<string[]> {
    const rows: { ref: string }[] = await db.query(
      `SELECT DISTINCT message_ref AS ref FROM notification.notifications
       WHERE application_id = $1 AND recipient_id = $2 AND message_ref IS NOT NULL AND purging_at IS NULL`,
      [applicationId, recipientId],
    );
    return rows.map((row) => row.ref);
  },

  /** The recipient's visible items, newest first, ties by id, strictly after the cursor. */
  async itemsPage(
    db: Db,
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
    return db.query(
      `${items}
       SELECT i.*, ${SENDERS}, to_char(i."createdAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS cursor
       FROM items i ${keyset}
       ORDER BY i."createdAt" DESC, i."externalId" ASC LIMIT $${params.length}`,
      params,
    );
  },

  /** Visible items with at least one unread row (an aggregated item counts once). */
  async countUnreadItems(db: Db, applicationId: string, recipientId: string, visibility: Visibility): Promise<number> {
    const params: unknown[] = [applicationId, recipientId];
    const rows: { count: number }[] = await db.query(
      `${itemsCte(params, visibility)}
       SELECT count(*)::int AS count FROM items i WHERE EXISTS (
         SELECT 1 FROM visible v WHERE COALESCE(v."aggregationKey", v."externalId") = COALESCE(i."aggregationKey", i."externalId")
           AND v."readStatus" = 'unread')`,
      params,
    );
    return rows[0].count;
  },

  async countItems(db: Db, applicationId: string, recipientId: string, visibility: Visibility): Promise<number> {
    const params: unknown[] = [applicationId, recipientId];
    const rows: { count: number }[] = await db.query(`${itemsCte(params, visibility)} SELECT count(*)::int AS count FROM items`, params);
    return rows[0].count;
  },

  /** The item that shows this row, or null when the row is not visible (or gone). */
  async itemOf(db: Db, applicationId: string, row: NotificationRow, visibility: Visibility): Promise<NotificationItemRow | null> {
    const params: unknown[] = [applicationId, row.recipientId];
    const items = itemsCte(params, visibility);
    params.push(row.internalId);
    const rows: NotificationItemRow[] = await db.query(
      `${items}
       SELECT i.*, ${SENDERS} FROM items i
       WHERE COALESCE(i."aggregationKey", i."externalId") =
         (SELECT COALESCE(v."aggregationKey", v."externalId") FROM visible v WHERE v."internalId" = $${params.length})`,
      params,
    );
    return rows[0] ?? null;
  },

  /**
   * Deletes a notification, with the rows aggregated into the same item (its recipient sees them
   * as one); returns whether anything was deleted.
   */
  async delete(db: Db, applicationId: string, externalId: string): Promise<boolean> {
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
