/**
 * Deletion cascade SQL of this service: marking makes rows unreadable at once (every read filters
 * `purging_at`); the purge (definePurge) then removes marked rows in bounded batches, using the
 * statement below for messages.
 */
import { countAffected as count, deleteBatch, type Queryable } from '@collab/shared';

/** What a user's deletion marks and deletes, in this order (`$1` the application, `$2` the user). */
const MARK_USER = [
  `UPDATE conversation.messages SET purging_at = now() WHERE application_id = $1 AND author_id = $2 AND purging_at IS NULL`,
  `UPDATE conversation.threads t SET purging_at = now()
   WHERE t.application_id = $1 AND t.purging_at IS NULL
     AND EXISTS (SELECT 1 FROM conversation.messages m WHERE m.thread_id = t.internal_id AND m.author_id = $2)
     AND NOT EXISTS (SELECT 1 FROM conversation.messages m WHERE m.thread_id = t.internal_id AND m.purging_at IS NULL)`,
  `DELETE FROM conversation.message_reactions r USING conversation.messages m
   WHERE r.user_id = $2 AND m.internal_id = r.message_id AND m.application_id = $1`,
  `DELETE FROM conversation.message_mentions mm USING conversation.messages m
   WHERE mm.user_id = $2 AND m.internal_id = mm.message_id AND m.application_id = $1`,
  `DELETE FROM conversation.thread_participants p USING conversation.threads t
   WHERE p.user_id = $2 AND t.internal_id = p.thread_id AND t.application_id = $1`,
  `UPDATE conversation.files SET purging_at = now() WHERE application_id = $1 AND owner_id = $2 AND purging_at IS NULL`,
];

export const purgeRepository = {
  async markGroup(db: Queryable, applicationId: string, groupId: string): Promise<number> {
    return count(
      db,
      `UPDATE conversation.threads SET purging_at = now() WHERE application_id = $1 AND group_id = $2 AND purging_at IS NULL`,
      [applicationId, groupId],
    );
  },

  /**
   * A permanently deleted user: their messages and files are marked, threads left without a
   * visible message by that are marked, and their small per-user rows go at once.
   */
  async markUser(db: Queryable, applicationId: string, userId: string): Promise<void> {
    for (const statement of MARK_USER) await db.query(statement, [applicationId, userId]);
  },

  /**
   * Deletes up to `limit` marked messages (or messages of marked threads); returns how many.
   * Messages are the big table, so every step is an index probe: the marked threads' ids and the
   * batch's message ids are each collected first (`= ANY(ARRAY(…))`, evaluated once), where
   * `IN (…)` let the planner join instead, scanning messages (or messages_thread_created_idx)
   * from the start: 100,000 rows read to delete 1,000.
   */
  async deleteMarkedMessages(db: Queryable, applicationId: string, limit: number): Promise<number> {
    const deleteWhere = (where: string) => deleteBatch(db, 'conversation.messages', 'internal_id', where, [applicationId], limit);
    const own = await deleteWhere('application_id = $1 AND purging_at IS NOT NULL');
    if (own > 0) return own;
    return deleteWhere(
      'thread_id = ANY(ARRAY(SELECT internal_id FROM conversation.threads WHERE application_id = $1 AND purging_at IS NOT NULL))',
    );
  },
};
