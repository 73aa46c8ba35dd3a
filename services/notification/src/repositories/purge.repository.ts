/**
 * Deletion cascade SQL of this service: marking makes notifications unreadable at once (every read
 * filters `purging_at`); the purge (definePurge) then removes marked rows in bounded batches.
 */
import { countAffected, type Queryable } from '@collab/shared';

export const purgeRepository = {
  /** Notifications sent to or by a permanently deleted user. */
  async markUser(db: Queryable, applicationId: string, userId: string): Promise<number> {
    return countAffected(
      db,
      `UPDATE notification.notifications SET purging_at = now()
       WHERE application_id = $1 AND (recipient_id = $2 OR actor_id = $2) AND purging_at IS NULL`,
      [applicationId, userId],
    );
  },
};
