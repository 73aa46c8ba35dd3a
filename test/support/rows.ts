/** Counting stored rows of a test system, for assertions on what a purge or a batch left behind. */
import type { TestSystem } from './system.js';

/** The `n` of a query's first row (write it `SELECT count(*)::int AS n ...`). */
export async function count(system: TestSystem, sql: string, params: unknown[]): Promise<number> {
  return (await system.sql.query(sql, params)).rows[0].n;
}

/** Stored users of an application with this external id (0 or 1). */
export function storedUsers(system: TestSystem, applicationId: string, userId: string): Promise<number> {
  return count(system, 'SELECT count(*)::int AS n FROM identity.users WHERE application_id = $1 AND external_id = $2', [applicationId, userId]);
}

/** Messages of one thread of an application. */
export function threadMessages(system: TestSystem, applicationId: string, threadId: string): Promise<number> {
  return count(
    system,
    `SELECT count(*)::int AS n FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
     WHERE t.external_id = $1 AND t.application_id = $2`,
    [threadId, applicationId],
  );
}

/** Rows of an application in conversation and notification, and its pending recorded deletions (purge requests). */
export async function applicationRows(system: TestSystem, applicationId: string) {
  const { rows } = await system.sql.query(
    `SELECT (SELECT count(*)::int FROM conversation.threads WHERE application_id = $1) AS threads,
            (SELECT count(*)::int FROM conversation.messages WHERE application_id = $1) AS messages,
            (SELECT count(*)::int FROM notification.notifications WHERE application_id = $1) AS notifications,
            (SELECT count(*)::int FROM conversation.application_purges WHERE application_id = $1 AND completed_at IS NULL)
              + (SELECT count(*)::int FROM notification.application_purges WHERE application_id = $1 AND completed_at IS NULL)
              + (SELECT count(*)::int FROM webhooks.application_purges WHERE application_id = $1 AND completed_at IS NULL) AS "purgeRequests"`,
    [applicationId],
  );
  return rows[0] as { threads: number; messages: number; notifications: number; purgeRequests: number };
}
