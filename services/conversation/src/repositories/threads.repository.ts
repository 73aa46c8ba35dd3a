/** All SQL about threads. Every method takes the application id first. */
import { rows, type Queryable } from '@collab/shared';
import type { ThreadRef, ThreadRow } from '../entities/index.js';
import { messagesTable, threadsTable } from './tables.js';

export type NewThread = Pick<ThreadRow, 'groupId' | 'name' | 'url' | 'location' | 'metadata' | 'extraClassnames'>;
export type ThreadFields = Partial<
  Pick<ThreadRow, 'externalId' | 'groupId' | 'name' | 'url' | 'location' | 'metadata' | 'extraClassnames' | 'resolvedAt'>
>;

export interface ThreadListFilter {
  location?: { value: Record<string, unknown>; partialMatch: boolean };
  metadata?: Record<string, unknown>;
  groupId?: string;
  firstMessage?: { from?: Date; to?: Date };
  mostRecentMessage?: { from?: Date; to?: Date };
  resolved?: boolean;
}

/** Cursor of the thread list: latest activity (microseconds, as text) and id. */
export interface ThreadCursor {
  activity: string;
  externalId: string;
}

/** WHERE clause of the thread list, with its parameters starting at $2 ($1 is the application). */
function listConditions(filter: ThreadListFilter): { where: string; params: unknown[] } {
  const conditions = ['t.application_id = $1', 't.purging_at IS NULL'];
  const params: unknown[] = [];
  const add = (sql: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(sql(`$${params.length + 1}`));
  };
  if (filter.location)
    add((p) => (filter.location!.partialMatch ? `t.location @> ${p}::jsonb` : `t.location = ${p}::jsonb`), JSON.stringify(filter.location.value));
  if (filter.metadata) add((p) => `t.metadata @> ${p}::jsonb`, JSON.stringify(filter.metadata));
  if (filter.groupId !== undefined) add((p) => `t.group_id = ${p}`, filter.groupId);
  if (filter.resolved !== undefined) conditions.push(filter.resolved ? 't.resolved_at IS NOT NULL' : 't.resolved_at IS NULL');
  const firstMessage = `COALESCE((SELECT min(m.created_at) FROM conversation.messages m WHERE m.thread_id = t.internal_id AND m.purging_at IS NULL), t.created_at)`;
  const latestMessage = `(SELECT max(m.created_at) FROM conversation.messages m WHERE m.thread_id = t.internal_id AND m.purging_at IS NULL)`;
  if (filter.firstMessage?.from) add((p) => `${firstMessage} >= ${p}`, filter.firstMessage.from);
  if (filter.firstMessage?.to) add((p) => `${firstMessage} <= ${p}`, filter.firstMessage.to);
  if (filter.mostRecentMessage) conditions.push(`${latestMessage} IS NOT NULL`);
  if (filter.mostRecentMessage?.from) add((p) => `${latestMessage} >= ${p}`, filter.mostRecentMessage.from);
  if (filter.mostRecentMessage?.to) add((p) => `${latestMessage} <= ${p}`, filter.mostRecentMessage.to);
  return { where: conditions.join(' AND '), params };
}

/**
 * The repository's statements that the bench's raw-SQL baselines issue too, exported so that
 * they issue the very same text.
 */
export const threadsStatements = {
  /** The thread $2 (external id), locked for the transaction with `forUpdate`. */
  find: (forUpdate: boolean) =>
    `SELECT ${threadsTable.select} FROM conversation.threads t WHERE t.application_id = $1 AND t.external_id = $2 AND t.purging_at IS NULL${forUpdate ? ' FOR UPDATE' : ''}`,
  /** Creates the thread $2 unless taken: $3 group, $4 name, $5 url, $6 location, $7 metadata, $8 extra classnames. */
  insertIfAbsent: `INSERT INTO conversation.threads AS t (application_id, external_id, group_id, name, url, location, metadata, extra_classnames)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (application_id, external_id) DO NOTHING
       RETURNING ${threadsTable.select}`,
};

export const threadsRepository = {
  async find(db: Queryable, applicationId: string, externalId: string, forUpdate = false): Promise<ThreadRow | null> {
    const [row] = await rows<ThreadRow>(db, threadsStatements.find(forUpdate), [applicationId, externalId]);
    return row ?? null;
  },

  async findByInternalIds(db: Queryable, applicationId: string, internalIds: readonly string[]): Promise<ThreadRow[]> {
    if (internalIds.length === 0) return [];
    return rows<ThreadRow>(
      db,
      `SELECT ${threadsTable.select} FROM conversation.threads t WHERE t.application_id = $1 AND t.internal_id = ANY($2::bigint[]) AND t.purging_at IS NULL`,
      [applicationId, [...new Set(internalIds)]],
    );
  },

  /** Creates the thread unless the id is taken; returns the new row, or null when it existed. */
  async insertIfAbsent(db: Queryable, applicationId: string, externalId: string, thread: NewThread): Promise<ThreadRow | null> {
    const [row] = await rows<ThreadRow>(
      db,
      threadsStatements.insertIfAbsent,
      [
        applicationId,
        externalId,
        thread.groupId,
        thread.name,
        thread.url,
        JSON.stringify(thread.location),
        JSON.stringify(thread.metadata),
        thread.extraClassnames,
      ],
    );
    return row ?? null;
  },

  async update(db: Queryable, applicationId: string, internalId: ThreadRef, fields: ThreadFields): Promise<void> {
    const params: unknown[] = [applicationId, internalId];
    const { set } = threadsTable.write(fields, params);
    if (!set) return;
    await db.query(`UPDATE conversation.threads SET ${set} WHERE application_id = $1 AND internal_id = $2`, params);
  },

  /**
   * Recomputes the activity timestamp the thread list is ordered by: the timestamp of
   * the thread's latest message (any type, soft-deleted included), or its creation time when it
   * has none. Reactions are not activity, and a back-dated message counts at its own timestamp.
   * Called after any change to a thread's messages.
   */
  async refreshActivity(db: Queryable, applicationId: string, internalId: ThreadRef): Promise<void> {
    await db.query(
      `UPDATE conversation.threads t SET last_activity_at = COALESCE(
         (SELECT max(m.created_at) FROM conversation.messages m WHERE m.thread_id = t.internal_id), t.created_at)
       WHERE t.application_id = $1 AND t.internal_id = $2`,
      [applicationId, internalId],
    );
  },

  async delete(db: Queryable, applicationId: string, internalId: ThreadRef): Promise<void> {
    await db.query(`DELETE FROM conversation.threads WHERE application_id = $1 AND internal_id = $2`, [applicationId, internalId]);
  },

  /** One page, newest activity first, ties by id; the cursor is the last row of the previous page. */
  async listPage(
    db: Queryable,
    applicationId: string,
    filter: ThreadListFilter,
    page: { after: ThreadCursor | null; limit: number },
  ): Promise<(ThreadRow & { cursor: string })[]> {
    const { where, params } = listConditions(filter);
    const all: unknown[] = [applicationId, ...params];
    let keyset = '';
    if (page.after) {
      all.push(page.after.activity, page.after.externalId);
      const ts = `($${all.length - 1}::timestamp AT TIME ZONE 'UTC')`;
      keyset = ` AND (t.last_activity_at < ${ts} OR (t.last_activity_at = ${ts} AND t.external_id > $${all.length}))`;
    }
    all.push(page.limit);
    return rows<ThreadRow & { cursor: string }>(
      db,
      `SELECT ${threadsTable.select}, to_char(t.last_activity_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS cursor
       FROM conversation.threads t WHERE ${where}${keyset}
       ORDER BY t.last_activity_at DESC, t.external_id ASC LIMIT $${all.length}`,
      all,
    );
  },

  async count(db: Queryable, applicationId: string, filter: ThreadListFilter): Promise<number> {
    const { where, params } = listConditions(filter);
    const [row] = await rows<{ count: string }>(db, `SELECT count(*) AS count FROM conversation.threads t WHERE ${where}`, [
      applicationId,
      ...params,
    ]);
    return Number(row.count);
  },

  /**
   * Per-thread message statistics for the thread object: counts of visible user and action
   * messages and of deleted ones, and the authors of replies (every message but the first).
   */
  async stats(db: Queryable, threads: readonly ThreadRef[]) {
    if (threads.length === 0) return new Map<ThreadRef, ThreadStats>();
    // Repliers are listed in order of their first qualifying message, not alphabetically. Each
    // thread is read on its own from messages_thread_stats_idx, in its order (rather than a DISTINCT ON
    // over all listed threads, which sorts every message): the counts in one pass, then each type and
    // author found by a skip scan, with its first reply. A thread without messages gives no row.
    const stats = await rows<ThreadStats & { threadRef: ThreadRef }>(
      db,
      `SELECT t.thread_id AS "threadRef", c."userMessages", c."actionMessages", c."deletedMessages",
         COALESCE(r.repliers, '{}') AS repliers, COALESCE(r."actionMessageRepliers", '{}') AS "actionMessageRepliers"
       FROM unnest($1::bigint[]) AS t(thread_id)
       CROSS JOIN LATERAL (
         SELECT m.internal_id FROM conversation.messages m
         WHERE m.thread_id = t.thread_id AND m.purging_at IS NULL ORDER BY m.created_at, m.internal_id LIMIT 1
       ) f
       CROSS JOIN LATERAL (
         SELECT count(*) FILTER (WHERE m.deleted_at IS NULL AND m.type = 'user_message')::int AS "userMessages",
           count(*) FILTER (WHERE m.deleted_at IS NULL AND m.type = 'action_message')::int AS "actionMessages",
           count(*) FILTER (WHERE m.deleted_at IS NOT NULL)::int AS "deletedMessages"
         FROM conversation.messages m WHERE m.thread_id = t.thread_id AND m.purging_at IS NULL
       ) c
       CROSS JOIN LATERAL (
         WITH RECURSIVE authors AS (
           (SELECT m.type, m.author_id FROM conversation.messages m
            WHERE m.thread_id = t.thread_id AND m.purging_at IS NULL AND m.deleted_at IS NULL AND m.internal_id <> f.internal_id
            ORDER BY m.type, m.author_id LIMIT 1)
           UNION ALL
           SELECT step.type, step.author_id FROM authors a CROSS JOIN LATERAL (
             SELECT m.type, m.author_id FROM conversation.messages m
             WHERE m.thread_id = t.thread_id AND m.purging_at IS NULL AND m.deleted_at IS NULL AND m.internal_id <> f.internal_id
               AND (m.type, m.author_id) > (a.type, a.author_id)
             ORDER BY m.type, m.author_id LIMIT 1
           ) step
         )
         SELECT array_agg(a.author_id ORDER BY e.created_at, e.internal_id) FILTER (WHERE a.type = 'user_message') AS repliers,
           array_agg(a.author_id ORDER BY e.created_at, e.internal_id) FILTER (WHERE a.type = 'action_message') AS "actionMessageRepliers"
         FROM authors a CROSS JOIN LATERAL (
           SELECT m.created_at, m.internal_id FROM conversation.messages m
           WHERE m.thread_id = t.thread_id AND m.type = a.type AND m.author_id = a.author_id
             AND m.purging_at IS NULL AND m.deleted_at IS NULL AND m.internal_id <> f.internal_id
           ORDER BY m.created_at, m.internal_id LIMIT 1
         ) e
       ) r`,
      [[...new Set(threads)]],
    );
    return new Map(stats.map(({ threadRef, ...counts }) => [threadRef, counts]));
  },

  /** The users mentioned in each thread's messages (deleted ones included), in order of each user's first mention. */
  async mentioned(db: Queryable, threads: readonly ThreadRef[]): Promise<Map<ThreadRef, string[]>> {
    if (threads.length === 0) return new Map();
    const mentions = await rows<{ threadRef: ThreadRef; userIds: string[] }>(
      db,
      `SELECT "threadRef", array_agg(user_id ORDER BY created_at, internal_id) AS "userIds" FROM (
         SELECT DISTINCT ON (m.thread_id, mm.user_id) ${messagesTable.pick('threadRef')}, mm.user_id, m.created_at, m.internal_id
         FROM conversation.message_mentions mm JOIN conversation.messages m ON m.internal_id = mm.message_id
         WHERE m.thread_id = ANY($1::bigint[]) AND m.purging_at IS NULL
         ORDER BY m.thread_id, mm.user_id, m.created_at, m.internal_id
       ) first_mentions GROUP BY "threadRef"`,
      [[...new Set(threads)]],
    );
    return new Map(mentions.map((row) => [row.threadRef, row.userIds]));
  },
};

export interface ThreadStats {
  userMessages: number;
  actionMessages: number;
  deletedMessages: number;
  repliers: string[];
  actionMessageRepliers: string[];
}
