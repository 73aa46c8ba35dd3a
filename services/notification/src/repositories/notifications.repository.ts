/** All SQL about notifications. Every method takes the application id first. */
import { countAffected, deleteBatch, type Queryable as Db } from '@collab/shared';
import type { NotificationRow } from '../entities/index.js';

const COLUMNS = `n.internal_id AS "internalId", n.application_id AS "applicationId", n.external_id AS "externalId",
  n.recipient_id AS "recipientId", n.actor_id AS "actorId", n.template, n.url, n.icon_url AS "iconUrl",
  n.extra_classnames AS "extraClassnames", n.metadata, n.read_status AS "readStatus", n.created_at AS "createdAt"`;

export interface NotificationCursor {
  createdAtMicros: string;
  externalId: string;
}

export const notificationsRepository = {
  async insert(db: Db, row: Omit<NotificationRow, 'internalId' | 'readStatus' | 'createdAt'>): Promise<void> {
    await db.query(
      `INSERT INTO notification.notifications
         (application_id, external_id, recipient_id, actor_id, template, url, icon_url, extra_classnames, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        row.applicationId,
        row.externalId,
        row.recipientId,
        row.actorId,
        row.template,
        row.url,
        row.iconUrl,
        row.extraClassnames,
        JSON.stringify(row.metadata),
      ],
    );
  },

  /** Newest first, ties by id, strictly after the cursor. */
  async pageForRecipient(
    db: Db,
    applicationId: string,
    recipientId: string,
    page: { after: NotificationCursor | null; limit: number },
  ): Promise<(NotificationRow & { cursor: string })[]> {
    const params: unknown[] = [applicationId, recipientId];
    let keyset = '';
    if (page.after) {
      params.push(page.after.createdAtMicros, page.after.externalId);
      const ts = `($3::timestamp AT TIME ZONE 'UTC')`;
      keyset = ` AND (n.created_at < ${ts} OR (n.created_at = ${ts} AND n.external_id > $4))`;
    }
    params.push(page.limit);
    return db.query(
      `SELECT ${COLUMNS}, to_char(n.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS cursor
       FROM notification.notifications n
       WHERE n.application_id = $1 AND n.recipient_id = $2 AND n.purging_at IS NULL${keyset}
       ORDER BY n.created_at DESC, n.external_id ASC LIMIT $${params.length}`,
      params,
    );
  },

  async countForRecipient(db: Db, applicationId: string, recipientId: string): Promise<number> {
    const rows: { count: string }[] = await db.query(
      `SELECT count(*) AS count FROM notification.notifications WHERE application_id = $1 AND recipient_id = $2 AND purging_at IS NULL`,
      [applicationId, recipientId],
    );
    return Number(rows[0].count);
  },

  /** Returns whether a notification was deleted. */
  async delete(db: Db, applicationId: string, externalId: string): Promise<boolean> {
    const deleted = await countAffected(
      db,
      `DELETE FROM notification.notifications WHERE application_id = $1 AND external_id = $2 AND purging_at IS NULL`,
      [applicationId, externalId],
    );
    return deleted > 0;
  },
};

/** Deletion cascade: marking hides at once; purging removes in bounded batches (decisions.md 23). */
export const notificationPurgeRepository = {
  /** Notifications sent to or by a permanently deleted user (behavior.md §15). */
  async markUser(db: Db, applicationId: string, userId: string): Promise<number> {
    return countAffected(
      db,
      `UPDATE notification.notifications SET purging_at = now()
       WHERE application_id = $1 AND (recipient_id = $2 OR actor_id = $2) AND purging_at IS NULL`,
      [applicationId, userId],
    );
  },

  deleteMarked: (db: Db, applicationId: string, limit: number) =>
    deleteBatch(db, 'notification.notifications', 'internal_id', 'application_id = $1 AND purging_at IS NOT NULL', [applicationId], limit),

  deleteOfApplication: (db: Db, applicationId: string, limit: number) =>
    deleteBatch(db, 'notification.notifications', 'internal_id', 'application_id = $1', [applicationId], limit),

  /** Applications with notifications still marked (an index-only read of `notifications_purging_idx`). */
  async applicationsWithMarkedRows(db: Db): Promise<string[]> {
    const rows: { applicationId: string }[] = await db.query(
      `SELECT DISTINCT application_id AS "applicationId" FROM notification.notifications WHERE purging_at IS NOT NULL`,
    );
    return rows.map((row) => row.applicationId);
  },

  /** Records an application's deletion until its purge completed; a repeated one replaces it. */
  async requestApplicationPurge(db: Db, applicationId: string, requestId: string): Promise<void> {
    await db.query(
      `INSERT INTO notification.application_purges (application_id, request_id) VALUES ($1, $2)
       ON CONFLICT (application_id) DO UPDATE SET request_id = EXCLUDED.request_id, requested_at = now()`,
      [applicationId, requestId],
    );
  },

  /** The request id of the application's recorded deletion, or null. */
  async applicationPurgeRequest(db: Db, applicationId: string): Promise<string | null> {
    const rows: { requestId: string }[] = await db.query(
      `SELECT request_id AS "requestId" FROM notification.application_purges WHERE application_id = $1`,
      [applicationId],
    );
    return rows[0]?.requestId ?? null;
  },

  /** Removes the recorded deletion a job handled, unless a newer request replaced it. */
  async forgetApplicationPurge(db: Db, applicationId: string, requestId: string): Promise<void> {
    await db.query(`DELETE FROM notification.application_purges WHERE application_id = $1 AND request_id = $2`, [applicationId, requestId]);
  },

  /** Applications whose recorded deletion has not been handled yet. */
  async requestedApplicationPurges(db: Db): Promise<string[]> {
    const rows: { applicationId: string }[] = await db.query(`SELECT application_id AS "applicationId" FROM notification.application_purges`);
    return rows.map((row) => row.applicationId);
  },
};
