/**
 * All SQL about mails and thread opt-outs. Every method takes the application id first, but the
 * link lookup, whose random token is the link's only credential and names its application.
 */
import { countAffected, deleteBatch, rows, type ImportedRow, type MailCandidate, type Queryable } from '@collab/shared';
import type { MailRow, ThreadOptOutRow } from '../entities/index.js';
import { mailsTable, optOutsTable } from './tables.js';

export interface NewMail extends Omit<MailCandidate, 'requestId'> {
  id: string;
  linkToken: string;
  sendAfter: Date;
}

export const mailsRepository = {
  /** Records the mails not recorded yet (one per notification); answers those inserted. */
  async insert(db: Queryable, applicationId: string, news: readonly NewMail[]): Promise<Pick<MailRow, 'id' | 'notificationId'>[]> {
    if (news.length === 0) return [];
    const sorted = [...new Map(news.map((row) => [row.notificationId, row])).values()].sort((a, b) => (a.notificationId < b.notificationId ? -1 : 1));
    return rows<Pick<MailRow, 'id' | 'notificationId'>>(
      db,
      `INSERT INTO mail.mails AS m (id, application_id, notification_id, kind, recipient_id, actor_id, message_ref, thread_ref,
         reply_actions, thread_action_type, link_base, link_token, send_after)
       SELECT r.id, $1, r."notificationId", r.kind, r."recipientId", r."actorId", r."messageRef", r."threadRef",
         ARRAY(SELECT jsonb_array_elements_text(r."replyActions")), r."threadActionType", r."linkBase", r."linkToken", r."sendAfter"
       FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, "notificationId" text, kind text, "recipientId" text, "actorId" text,
         "messageRef" text, "threadRef" text, "replyActions" jsonb, "threadActionType" text, "linkBase" text, "linkToken" text, "sendAfter" timestamptz)
       ON CONFLICT (application_id, notification_id) DO NOTHING
       RETURNING ${mailsTable.pick('id', 'notificationId')}`,
      [applicationId, JSON.stringify(sorted)],
    );
  },

  async find(db: Queryable, applicationId: string, mailId: string): Promise<MailRow | null> {
    const [mail] = await rows<MailRow>(db, `SELECT ${mailsTable.select} FROM mail.mails m WHERE m.application_id = $1 AND m.id = $2`, [applicationId, mailId]);
    return mail ?? null;
  },

  /**
   * Takes a pending mail for sending: `sending` is committed before the mail goes to SMTP, so a
   * worker that dies after handing it over leaves it `sending`, never sent again. Null when it is
   * not pending (sent, skipped, or taken by another run).
   */
  async claim(db: Queryable, applicationId: string, mailId: string): Promise<MailRow | null> {
    const [claimed] = await rows<MailRow>(
      db,
      `WITH claimed AS (UPDATE mail.mails m SET status = 'sending' WHERE m.application_id = $1 AND m.id = $2 AND m.status = 'pending' RETURNING ${mailsTable.select})
       SELECT * FROM claimed`,
      [applicationId, mailId],
    );
    return claimed ?? null;
  },

  /** The outcome of a claimed mail: sent, skipped by a gate, failed; or back to pending when SMTP refused it (retried). */
  async settle(db: Queryable, applicationId: string, mailId: string, status: 'sent' | 'skipped' | 'failed' | 'pending', outcome: string | null): Promise<void> {
    await db.query(
      `UPDATE mail.mails SET status = $3, outcome = $4, sent_at = CASE WHEN $3 = 'sent' THEN now() ELSE sent_at END
       WHERE application_id = $1 AND id = $2 AND status = 'sending'`,
      [applicationId, mailId, status, outcome],
    );
  },

  /** Whether an earlier mail of this thread went to this recipient (later ones thread under the first). */
  async sentBefore(db: Queryable, applicationId: string, threadRef: string, recipientId: string, mailId: string): Promise<boolean> {
    const earlier = await rows<unknown>(
      db,
      `SELECT 1 FROM mail.mails WHERE application_id = $1 AND thread_ref = $2 AND recipient_id = $3 AND id <> $4 AND status IN ('sent', 'sending') LIMIT 1`,
      [applicationId, threadRef, recipientId, mailId],
    );
    return earlier.length > 0;
  },

  /** The mail a link names, by its token (any application: the token is the credential). */
  async findByLinkToken(db: Queryable, linkToken: string): Promise<MailRow | null> {
    const [mail] = await rows<MailRow>(db, `SELECT ${mailsTable.select} FROM mail.mails m WHERE m.link_token = $1`, [linkToken]);
    return mail ?? null;
  },

  async optOut(db: Queryable, applicationId: string, threadRef: string, userId: string): Promise<void> {
    await db.query(`INSERT INTO mail.thread_opt_outs (application_id, thread_ref, user_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [applicationId, threadRef, userId]);
  },

  async optedOut(db: Queryable, applicationId: string, threadRef: string, userId: string): Promise<boolean> {
    const found = await rows<unknown>(db, `SELECT 1 FROM mail.thread_opt_outs WHERE application_id = $1 AND thread_ref = $2 AND user_id = $3`, [applicationId, threadRef, userId]);
    return found.length > 0;
  },

  /** A dump's opt-outs (sorted, de-duplicated); answers how many were not stored yet. An opt-out has no data to overwrite. */
  async importOptOuts(db: Queryable, applicationId: string, dumped: readonly ImportedRow<'threadOptOuts'>[]): Promise<number> {
    const keys = [...new Set(dumped.map((row) => JSON.stringify([row.threadRef, row.userID])))].sort();
    return countAffected(
      db,
      `INSERT INTO mail.thread_opt_outs (application_id, thread_ref, user_id)
       SELECT $1, r->>0, r->>1 FROM jsonb_array_elements($2::jsonb) AS r
       ON CONFLICT DO NOTHING`,
      [applicationId, JSON.stringify(keys.map((key) => JSON.parse(key)))],
    );
  },

  /** A page of the application's opt-outs after (thread, user), for its export. */
  async optOutsPage(db: Queryable, applicationId: string, after: readonly [string, string] | null, limit: number): Promise<Pick<ThreadOptOutRow, 'threadRef' | 'userId'>[]> {
    return rows<Pick<ThreadOptOutRow, 'threadRef' | 'userId'>>(
      db,
      `SELECT ${optOutsTable.pick('threadRef', 'userId')} FROM mail.thread_opt_outs o
       WHERE o.application_id = $1 AND ($2::text IS NULL OR (o.thread_ref, o.user_id) > ($2, $3))
       ORDER BY o.thread_ref, o.user_id LIMIT $4`,
      [applicationId, after?.[0] ?? null, after?.[1] ?? null, limit],
    );
  },

  /** Pending mails due since a while whose job may have been lost with Redis, oldest first. */
  async due(db: Queryable, olderThan: Date, limit: number): Promise<Pick<MailRow, 'id' | 'applicationId'>[]> {
    return rows<Pick<MailRow, 'id' | 'applicationId'>>(
      db,
      `SELECT ${mailsTable.pick('id', 'applicationId')} FROM mail.mails m WHERE m.status = 'pending' AND m.send_after < $1 ORDER BY m.send_after LIMIT $2`,
      [olderThan, limit],
    );
  },

  /** One batch of a deleted application's mails and opt-outs; answers how many rows went. */
  async deleteApplication(db: Queryable, applicationId: string, limit: number): Promise<number> {
    const removed = await deleteBatch(db, 'mail.mails', 'id', 'application_id = $1', [applicationId], limit);
    return removed + (await countAffected(db, `DELETE FROM mail.thread_opt_outs WHERE application_id = $1`, [applicationId]));
  },

  /** A deleted user's mails (to or from them) and opt-outs. */
  async deleteUser(db: Queryable, applicationId: string, userId: string, limit: number): Promise<number> {
    const removed = await deleteBatch(db, 'mail.mails', 'id', 'application_id = $1 AND (recipient_id = $2 OR actor_id = $2)', [applicationId, userId], limit);
    return removed + (await countAffected(db, `DELETE FROM mail.thread_opt_outs WHERE application_id = $1 AND user_id = $2`, [applicationId, userId]));
  },
};
