/** SQL of the client-token thread reads: the viewer's threads and their read state. Every method takes the application id first. */
import type { FlatJson } from '@collab/shared';
import type { Db } from './db.js';

export interface ClientThreadFilter {
  location?: { value: FlatJson; partialMatch: boolean };
  metadata?: FlatJson;
  resolvedStatus?: 'any' | 'resolved' | 'unresolved';
  viewer?: ('subscribed' | 'mentioned')[];
}

export interface ThreadCounts {
  total: number;
  unread: number;
  unreadSubscribed: number;
  new: number;
  resolved: number;
  empty: number;
}

export const clientThreadsRepository = {
  /**
   * The counts of original-extras §4.7 over the threads of the groups that pass the filter. A
   * message is unseen when not deleted and created after the viewer's last-seen time (all are,
   * without one); only user messages count.
   */
  async counts(db: Db, applicationId: string, groupIds: readonly string[], viewerId: string, filter: ClientThreadFilter): Promise<ThreadCounts> {
    const viewer = filter.viewer ?? [];
    const [row] = await db.query(
      `WITH scoped AS (
         SELECT t.internal_id, t.resolved_at IS NOT NULL AS resolved, p.last_seen_at, coalesce(p.subscribed, false) AS subscribed
         FROM conversation.threads t
         LEFT JOIN conversation.thread_participants p ON p.thread_id = t.internal_id AND p.user_id = $3
         WHERE t.application_id = $1 AND t.group_id = ANY($2::text[]) AND t.purging_at IS NULL
           AND ($4::jsonb IS NULL OR (CASE WHEN $5 THEN t.location @> $4::jsonb ELSE t.location = $4::jsonb END))
           AND ($6::jsonb IS NULL OR t.metadata @> $6::jsonb)
           AND ($7 = 'any' OR ($7 = 'resolved') = (t.resolved_at IS NOT NULL))
           AND (cardinality($8::text[]) = 0
             OR ('subscribed' = ANY($8::text[]) AND p.subscribed IS TRUE)
             OR ('mentioned' = ANY($8::text[]) AND EXISTS (
               SELECT 1 FROM conversation.messages m JOIN conversation.message_mentions mm ON mm.message_id = m.internal_id
               WHERE m.thread_id = t.internal_id AND m.deleted_at IS NULL AND m.purging_at IS NULL
                 AND m.type = 'user_message' AND mm.user_id = $3)))
       ), stats AS (
         SELECT s.*,
           EXISTS (SELECT 1 FROM conversation.messages m WHERE m.thread_id = s.internal_id AND m.deleted_at IS NULL
                     AND m.purging_at IS NULL AND m.type = 'user_message') AS has_user,
           EXISTS (SELECT 1 FROM conversation.messages m WHERE m.thread_id = s.internal_id AND m.deleted_at IS NULL
                     AND m.purging_at IS NULL AND m.type = 'user_message'
                     AND (s.last_seen_at IS NULL OR m.created_at > s.last_seen_at)) AS has_unseen
         FROM scoped s
       )
       SELECT count(*) FILTER (WHERE has_user)::int AS total,
              count(*) FILTER (WHERE has_unseen AND NOT resolved)::int AS unread,
              count(*) FILTER (WHERE has_unseen AND NOT resolved AND subscribed)::int AS "unreadSubscribed",
              count(*) FILTER (WHERE has_user AND last_seen_at IS NULL AND NOT resolved)::int AS new,
              count(*) FILTER (WHERE resolved)::int AS resolved,
              count(*) FILTER (WHERE NOT has_user)::int AS empty
       FROM stats`,
      [
        applicationId,
        groupIds,
        viewerId,
        filter.location ? JSON.stringify(filter.location.value) : null,
        filter.location?.partialMatch ?? false,
        filter.metadata ? JSON.stringify(filter.metadata) : null,
        filter.resolvedStatus ?? 'any',
        viewer,
      ],
    );
    return row as ThreadCounts;
  },
};
