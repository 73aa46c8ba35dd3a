/** SQL of the client-token thread reads: the viewer's threads and their read state. Every method takes the application id first. */
import { rows, type FlatJson, type Queryable } from '@collab/shared';
import type { MessageRow, ThreadRef } from '../entities/index.js';
import { messagesTable } from './tables.js';

export interface ClientThreadFilter {
  location?: { value: FlatJson; partialMatch: boolean };
  metadata?: FlatJson;
  resolvedStatus?: 'any' | 'resolved' | 'unresolved';
  viewer?: ('subscribed' | 'mentioned')[];
  groupID?: string;
  organizationID?: string;
}

export interface ThreadCounts {
  total: number;
  unread: number;
  unreadSubscribed: number;
  new: number;
  resolved: number;
  empty: number;
}

export interface ClientThreadSort {
  by: 'first_message_timestamp' | 'most_recent_message_timestamp';
  direction: 'ascending' | 'descending';
}

export interface ClientThreadState {
  threadRef: ThreadRef;
  /** The viewer has a participant record (subscribed or not). */
  isParticipant: boolean;
  /** Unseen messages of any type, not deleted, not written by the viewer. */
  unread: number;
}

/**
 * The threads of the groups $2 that pass the filter ($4–$8), with the viewer's ($3) participant
 * record: a CTE body shared by the counts and the list, so both see the same threads.
 */
const SCOPED_THREADS = `
         SELECT t.internal_id, t.resolved_at IS NOT NULL AS resolved, p.last_seen_at, coalesce(p.subscribed, false) AS subscribed,
           p.user_id IS NOT NULL AS participant
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
                 AND m.type = 'user_message' AND mm.user_id = $3)))`;

function scopedParams(applicationId: string, groupIds: readonly string[], viewerId: string, filter: ClientThreadFilter) {
  return [
    applicationId,
    groupIds,
    viewerId,
    filter.location ? JSON.stringify(filter.location.value) : null,
    filter.location?.partialMatch ?? false,
    filter.metadata ? JSON.stringify(filter.metadata) : null,
    filter.resolvedStatus ?? 'any',
    filter.viewer ?? [],
  ];
}

export const clientThreadsRepository = {
  /**
   * The counts of original-extras §4.7 over the threads of the groups that pass the filter. A
   * message is unseen when not deleted and created after the viewer's last-seen time (all are,
   * without one); only user messages count.
   */
  async counts(db: Queryable, applicationId: string, groupIds: readonly string[], viewerId: string, filter: ClientThreadFilter): Promise<ThreadCounts> {
    const [row] = await rows<ThreadCounts>(
      db,
      `WITH scoped AS (${SCOPED_THREADS}
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
      scopedParams(applicationId, groupIds, viewerId, filter),
    );
    return row;
  },

  /**
   * One page of the viewer's threads that pass the filter, ordered by the first (or newest)
   * creation time of their non-deleted messages, threads without one last; `limit + 1` rows so
   * that the caller can tell whether there are more. Each comes with the viewer's read state.
   */
  async page(
    db: Queryable,
    applicationId: string,
    groupIds: readonly string[],
    viewerId: string,
    filter: ClientThreadFilter,
    sort: ClientThreadSort,
    limit: number,
  ): Promise<ClientThreadState[]> {
    const key = sort.by === 'most_recent_message_timestamp' ? 'max' : 'min';
    const direction = sort.direction === 'ascending' ? 'ASC' : 'DESC';
    return rows<ClientThreadState>(
      db,
      `WITH scoped AS (${SCOPED_THREADS}
       )
       SELECT s.internal_id AS "threadRef", s.participant AS "isParticipant",
         (SELECT count(*) FROM conversation.messages m WHERE m.thread_id = s.internal_id AND m.deleted_at IS NULL
            AND m.purging_at IS NULL AND m.author_id <> $3
            AND (s.last_seen_at IS NULL OR m.created_at > s.last_seen_at))::int AS unread
       FROM scoped s
       ORDER BY (SELECT ${key}(m.created_at) FROM conversation.messages m
                 WHERE m.thread_id = s.internal_id AND m.deleted_at IS NULL AND m.purging_at IS NULL) ${direction} NULLS LAST,
         s.internal_id ${direction}
       LIMIT $9`,
      [...scopedParams(applicationId, groupIds, viewerId, filter), limit + 1],
    );
  },

  /** The viewer's read state of the given threads (unread count and whether they take part), by thread. */
  async states(db: Queryable, applicationId: string, threads: readonly ThreadRef[], viewerId: string): Promise<Map<ThreadRef, ClientThreadState>> {
    if (threads.length === 0) return new Map();
    const states = await rows<ClientThreadState>(
      db,
      `SELECT t.internal_id AS "threadRef", p.user_id IS NOT NULL AS "isParticipant",
         (SELECT count(*) FROM conversation.messages m WHERE m.thread_id = t.internal_id AND m.deleted_at IS NULL
            AND m.purging_at IS NULL AND m.author_id <> $3
            AND (p.last_seen_at IS NULL OR m.created_at > p.last_seen_at))::int AS unread
       FROM conversation.threads t
       LEFT JOIN conversation.thread_participants p ON p.thread_id = t.internal_id AND p.user_id = $3
       WHERE t.application_id = $1 AND t.internal_id = ANY($2::bigint[])`,
      [applicationId, [...new Set(threads)], viewerId],
    );
    return new Map(states.map((state) => [state.threadRef, state]));
  },

  /** The first and the last message (deleted ones included) of each thread; one row twice for a thread of one message. */
  async firstAndLast(db: Queryable, applicationId: string, threads: readonly ThreadRef[]): Promise<MessageRow[]> {
    if (threads.length === 0) return [];
    return rows<MessageRow>(
      db,
      `(SELECT DISTINCT ON (m.thread_id) ${messagesTable.select} FROM conversation.messages m
          WHERE m.application_id = $1 AND m.thread_id = ANY($2::bigint[]) AND m.purging_at IS NULL
          ORDER BY m.thread_id, m.created_at, m.internal_id)
       UNION ALL
       (SELECT DISTINCT ON (m.thread_id) ${messagesTable.select} FROM conversation.messages m
          WHERE m.application_id = $1 AND m.thread_id = ANY($2::bigint[]) AND m.purging_at IS NULL
          ORDER BY m.thread_id, m.created_at DESC, m.internal_id DESC)`,
      [applicationId, [...new Set(threads)]],
    );
  },
};
