/**
 * The operator's side of failed outbox entries (refused by the service they go to, kept with
 * their reason): listing them, and re-queueing them once the cause is fixed.
 */
import { countAffected, rows, type Queryable } from '../sql.js';
import { OUTBOX_FAILED_AT } from './outbox.js';
import { outboxChannel } from './relay.js';
import { outboxTable, type OutboxRow } from './table.js';

export type FailedOutboxEntry = Pick<OutboxRow, 'id' | 'applicationId' | 'topic' | 'attempts' | 'createdAt'> & { lastError: string };

/** The failed entries of `schema`'s outbox, oldest first. */
export async function failedOutboxEntries(db: Queryable, schema: string): Promise<FailedOutboxEntry[]> {
  const { name: table, pick } = outboxTable(schema);
  return rows<FailedOutboxEntry>(
    db,
    `SELECT ${pick('id', 'applicationId', 'topic', 'attempts', 'createdAt')}, coalesce(o.last_error, '') AS "lastError"
     FROM ${table} o WHERE o.available_at = '${OUTBOX_FAILED_AT}' ORDER BY o.created_at, o.id`,
  );
}

/**
 * Makes failed entries of `schema`'s outbox due now (all of them, or those of `ids`) and wakes its
 * relays; returns how many. Their order is kept: an entry runs by when it was recorded.
 */
export async function retryFailedOutboxEntries(db: Queryable, schema: string, ids: string[] | 'all'): Promise<number> {
  const queued = await countAffected(
    db,
    `UPDATE "${schema}"."outbox" SET available_at = clock_timestamp()
     WHERE available_at = '${OUTBOX_FAILED_AT}' AND ($1::uuid[] IS NULL OR id = ANY($1::uuid[]))`,
    [ids === 'all' ? null : ids],
  );
  if (queued > 0) await db.query('SELECT pg_notify($1, $2)', [outboxChannel(schema), '']);
  return queued;
}
