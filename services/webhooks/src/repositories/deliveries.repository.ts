/**
 * All SQL about recorded events and their deliveries. Public reads are scoped to one application;
 * the worker's statements name a delivery by its id, which only the worker's own jobs carry.
 */
import { deleteBatch, rows, type Queryable } from '@collab/shared';
import type { DeliveryAttemptRow, DeliveryRow, DeliveryStatus, EventRow } from '../entities/index.js';
import { attemptsTable, deliveriesTable, eventsTable } from './tables.js';

/** A delivery as the log shows it (all but its last answer's body and its job), with its event's type. */
const LOG_COLUMNS = `${deliveriesTable.pick('id', 'eventId', 'applicationId', 'url', 'status', 'attempts', 'lastStatusCode', 'lastError', 'createdAt', 'lastAttemptAt', 'nextAttemptAt')}, ${eventsTable.pick('type')}`;

/** A delivery as the log shows it, with its event's type. */
export type DeliveryLogRow = Omit<DeliveryRow, 'lastBody' | 'sendingJob'> & Pick<EventRow, 'type'>;
/** A row of a log page, with its position for the next page's token. */
export type DeliveryListRow = DeliveryLogRow & { cursor: string };

export interface DeliveryFilter {
  status?: DeliveryStatus;
  type?: string;
  url?: string;
}

/** What one attempt needs: the delivery, its event and when the event happened. */
export interface DueDelivery {
  id: string;
  applicationId: string;
  eventId: string;
  url: string;
  attempts: number;
  type: string;
  payload: Record<string, unknown>;
  eventCreatedAt: Date;
}

export interface AttemptResult {
  status: DeliveryStatus;
  statusCode: number | null;
  error: string | null;
  body: string;
  nextAttemptAt: Date | null;
}

export const deliveriesRepository = {
  /** Records an event and one pending delivery per URL; recording the same event again adds nothing. */
  async recordEvent(
    db: Queryable,
    applicationId: string,
    event: { id: string; type: string; payload: Record<string, unknown> },
    urls: string[],
  ): Promise<{ id: string; attempts: number }[]> {
    await db.query(
      `INSERT INTO webhooks.events (id, application_id, type, payload) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
      [event.id, applicationId, event.type, JSON.stringify(event.payload)],
    );
    return rows<Pick<DeliveryRow, 'id' | 'attempts'>>(
      db,
      `INSERT INTO webhooks.deliveries AS d (id, event_id, application_id, url, status, next_attempt_at)
       SELECT gen_random_uuid(), $1, $2, url, 'pending', now() FROM unnest($3::text[]) AS url
       ON CONFLICT (event_id, url) DO NOTHING
       RETURNING ${deliveriesTable.pick('id', 'attempts')}`,
      [event.id, applicationId, urls],
    );
  },

  /** One page of the log, newest first, strictly after the cursor. */
  page(
    db: Queryable,
    applicationId: string,
    filter: DeliveryFilter,
    page: { after: { createdAtMicros: string; id: string } | null; limit: number },
  ): Promise<DeliveryListRow[]> {
    const { where, parameters } = filterSql(applicationId, filter);
    if (page.after) {
      parameters.push(page.after.createdAtMicros, page.after.id);
      where.push(`(d.created_at, d.id) < (($${parameters.length - 1})::timestamp AT TIME ZONE 'UTC', $${parameters.length}::uuid)`);
    }
    parameters.push(page.limit);
    return rows<DeliveryListRow>(
      db,
      `SELECT ${LOG_COLUMNS}, to_char(d.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') AS cursor
       FROM webhooks.deliveries d JOIN webhooks.events e ON e.id = d.event_id
       WHERE ${where.join(' AND ')} ORDER BY d.created_at DESC, d.id DESC LIMIT $${parameters.length}`,
      parameters,
    );
  },

  async count(db: Queryable, applicationId: string, filter: DeliveryFilter): Promise<number> {
    const { where, parameters } = filterSql(applicationId, filter);
    const [{ count }] = await rows<{ count: number }>(
      db,
      `SELECT count(*)::int AS count FROM webhooks.deliveries d JOIN webhooks.events e ON e.id = d.event_id WHERE ${where.join(' AND ')}`,
      parameters,
    );
    return count;
  },

  async find(db: Queryable, applicationId: string, id: string): Promise<(DeliveryLogRow & { lastBody: string | null }) | null> {
    const [delivery] = await rows<DeliveryLogRow & { lastBody: string | null }>(
      db,
      `SELECT ${LOG_COLUMNS}, ${deliveriesTable.pick('lastBody')}
       FROM webhooks.deliveries d JOIN webhooks.events e ON e.id = d.event_id
       WHERE d.application_id = $1 AND d.id = $2`,
      [applicationId, id],
    );
    return delivery ?? null;
  },

  /**
   * Makes a delivery due now, whatever its state (one being sent stays as it is); returns its
   * attempts so far, or null when it is not the application's.
   */
  async makeDue(db: Queryable, applicationId: string, id: string): Promise<number | null> {
    // UPDATE … RETURNING inside a WITH: TypeORM answers a bare one as [rows, count].
    const [made] = await rows<Pick<DeliveryRow, 'attempts'>>(
      db,
      `WITH made AS (UPDATE webhooks.deliveries
         SET status = 'pending', next_attempt_at = CASE WHEN sending_job IS NULL THEN now() ELSE next_attempt_at END
         WHERE application_id = $1 AND id = $2 RETURNING attempts)
       SELECT attempts FROM made`,
      [applicationId, id],
    );
    return made?.attempts ?? null;
  },

  /**
   * Takes the next attempt of a due delivery for one job: counts it and marks it as being sent by
   * that job, so that another job for the same delivery finds it not due. The same job run again
   * (its worker died mid-attempt and the queue retried it) takes the same attempt again; an attempt
   * whose job was lost altogether (Redis lost it) is taken over by any job after `leaseMs`.
   * Null when there is nothing to send.
   */
  async claimAttempt(db: Queryable, applicationId: string, id: string, jobId: string, leaseMs: number): Promise<DueDelivery | null> {
    const [claimed] = await rows<DueDelivery>(
      db,
      `WITH claimed AS (UPDATE webhooks.deliveries d
       SET attempts = CASE WHEN d.sending_job = $3 THEN d.attempts ELSE d.attempts + 1 END, sending_job = $3, last_attempt_at = now()
       FROM webhooks.events e
       WHERE d.application_id = $1 AND d.id = $2 AND e.id = d.event_id AND d.status = 'pending'
         AND (d.sending_job = $3
           OR (d.sending_job IS NULL AND d.next_attempt_at <= now())
           OR (d.sending_job IS NOT NULL AND d.last_attempt_at < now() - make_interval(secs => $4::float8 / 1000)))
       RETURNING ${deliveriesTable.pick('id', 'applicationId', 'eventId', 'url', 'attempts')}, ${eventsTable.pick('type', 'payload')},
         ${eventsTable.as('createdAt', 'eventCreatedAt')})
       SELECT * FROM claimed`,
      [applicationId, id, jobId, leaseMs],
    );
    return claimed ?? null;
  },

  /**
   * Records how the job's attempt ended (unless another job took the delivery over meanwhile), on
   * the delivery and as a row of its attempts, in one statement.
   */
  async recordAttempt(db: Queryable, id: string, jobId: string, result: AttemptResult, durationMs: number): Promise<boolean> {
    const [{ recorded }] = await rows<{ recorded: number }>(
      db,
      `WITH recorded AS (UPDATE webhooks.deliveries
           SET status = $3, last_status_code = $4, last_error = $5, last_body = $6, next_attempt_at = $7, sending_job = NULL
           WHERE id = $1 AND sending_job = $2
           RETURNING id, application_id, attempts, last_attempt_at),
         logged AS (INSERT INTO webhooks.delivery_attempts
             (delivery_id, attempt, application_id, started_at, duration_ms, status, status_code, error)
           SELECT id, attempts, application_id, last_attempt_at, $8, $3, $4, $5 FROM recorded
           ON CONFLICT (delivery_id, attempt) DO NOTHING)
       SELECT count(*)::int AS recorded FROM recorded`,
      [id, jobId, result.status, result.statusCode, result.error, result.body, result.nextAttemptAt, Math.round(durationMs)],
    );
    return recorded > 0;
  },

  /** The latest `limit` attempts of one of the application's deliveries, newest first. */
  attempts(db: Queryable, applicationId: string, deliveryId: string, limit: number): Promise<DeliveryAttemptRow[]> {
    return rows<DeliveryAttemptRow>(
      db,
      `SELECT ${attemptsTable.select} FROM webhooks.delivery_attempts a WHERE a.application_id = $1 AND a.delivery_id = $2
       ORDER BY a.attempt DESC LIMIT $3`,
      [applicationId, deliveryId, limit],
    );
  },

  /** Pending deliveries that are due, or whose attempt's job was lost, and may have no job in Redis. */
  due(db: Queryable, leaseMs: number, limit: number): Promise<Pick<DeliveryRow, 'id' | 'applicationId' | 'attempts'>[]> {
    return rows<Pick<DeliveryRow, 'id' | 'applicationId' | 'attempts'>>(
      db,
      `SELECT ${deliveriesTable.pick('id', 'applicationId', 'attempts')} FROM webhooks.deliveries d
       WHERE d.status = 'pending'
         AND ((d.sending_job IS NULL AND d.next_attempt_at <= now())
           OR (d.sending_job IS NOT NULL AND d.last_attempt_at < now() - make_interval(secs => $1::float8 / 1000)))
       ORDER BY d.next_attempt_at LIMIT $2`,
      [leaseMs, limit],
    );
  },

  /** Removes events (and their deliveries) older than the log's retention, in bounded batches. */
  pruneBefore(db: Queryable, before: Date, limit: number): Promise<number> {
    return deleteBatch(
      db,
      'webhooks.events',
      'id',
      `created_at < $1 AND NOT EXISTS (SELECT 1 FROM webhooks.deliveries d WHERE d.event_id = webhooks.events.id AND d.status = 'pending')`,
      [before],
      limit,
    );
  },
};

function filterSql(applicationId: string, filter: DeliveryFilter) {
  const where = ['d.application_id = $1'];
  const parameters: unknown[] = [applicationId];
  if (filter.status) {
    parameters.push(filter.status);
    where.push(`d.status = $${parameters.length}`);
  }
  if (filter.type) {
    parameters.push(filter.type);
    where.push(`e.type = $${parameters.length}`);
  }
  if (filter.url) {
    parameters.push(filter.url);
    where.push(`d.url = $${parameters.length}`);
  }
  return { where, parameters };
}
