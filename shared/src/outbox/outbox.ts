/**
 * A transactional outbox. A service records work for others (a deletion to cascade into the
 * services that depend on it, an event to deliver) in the same transaction as the change that
 * causes it: the work exists exactly when the change committed. A relay then runs each entry's
 * handler until it succeeds, and the request that recorded an entry may run it at once
 * (`processNow`). Handlers must be idempotent: an entry whose handler succeeded is run again when
 * the process dies before deleting it.
 *
 * Each service declares its topics with their payload schemas (`defineOutbox`); a payload is
 * validated when recorded and again before its handler runs.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Infer, ObjectSchema, Shape } from '../schema/index.js';
import { rows, type Queryable } from '../sql.js';
import { outboxChannel, startOutboxRelay, type OutboxProcessor } from './relay.js';
import { outboxTable, type OutboxRow } from './table.js';

export type OutboxTopics = Record<string, ObjectSchema<Shape>>;
type TopicName<T extends OutboxTopics> = keyof T & string;

/** An entry to record: its topic, the tenant, the request that causes it and the topic's payload. */
export type NewOutboxEntry<T extends OutboxTopics> = {
  [K in TopicName<T>]: { topic: K; applicationId: string; requestId: string; payload: Infer<T[K]> };
}[TopicName<T>];

/** An entry as its handler gets it. */
export interface OutboxEntry<Payload> {
  id: string;
  applicationId: string;
  requestId: string;
  payload: Payload;
  /** Failed runs before this one. */
  attempts: number;
}

/**
 * One handler per topic; a handler that throws is retried later (with backoff), forever, unless
 * its work was refused (isRefusal): the entry is then kept as failed. A handler must end in
 * bounded time (time its calls out): a relay runs one entry at a time.
 */
export type OutboxHandlers<T extends OutboxTopics> = {
  [K in TopicName<T>]: (entry: OutboxEntry<Infer<T[K]>>, log: Logger) => Promise<void>;
};

/**
 * Optional handlers of several consecutive entries of one topic at once, in their order: where
 * handing work over together saves round trips (one call for many events). A batch that throws
 * is not retried as a batch: each of its entries then runs through its own handler, so that one
 * entry that keeps failing holds back only itself. Like the handlers, they must be idempotent.
 */
export type OutboxBatchHandlers<T extends OutboxTopics> = {
  [K in TopicName<T>]?: (entries: OutboxEntry<Infer<T[K]>>[], log: Logger) => Promise<void>;
};


export interface Outbox<T extends OutboxTopics> {
  readonly schema: string;
  readonly topics: T;
  /**
   * Records entries in the caller's transaction (in this order) and wakes the relays at its
   * commit; returns their ids. Nothing is recorded if the transaction rolls back. With
   * `relayAfterMs`, the relays leave the entries to the caller for that long: it runs them itself
   * after its commit (processNow), and a relay runs them only if it did not (it died meanwhile).
   * `alongside`: a write of the caller's whose result it does not need, run in the same statement
   * as the first entry (a round trip fewer); it sees the transaction's earlier writes, as it would
   * alone. Its placeholders are its own ($1 is its first parameter).
   */
  record(tx: Queryable, entries: readonly NewOutboxEntry<T>[], options?: RecordOptions): Promise<string[]>;
  /** What runs this outbox's entries with these handlers (and batch handlers), on this data source. */
  processor(db: DataSource, handlers: OutboxHandlers<T>, logger: Logger, batchHandlers?: OutboxBatchHandlers<T>): OutboxProcessor;
}

export interface RecordOptions {
  relayAfterMs?: number;
  alongside?: { statement: string; params: readonly unknown[] };
}

/** The first retry waits this long; each further one twice as long as the previous, up to RETRY_MAX_MS. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 5 * 60_000;
/**
 * Due entries a relay takes at once, in one transaction holding the relay lock: one round trip
 * to find them, and batch handlers get up to this many; small enough that a batch whose entries
 * all fall back to their own handlers still ends in bounded time.
 */
const RELAY_BATCH_SIZE = 100;

/**
 * A failed entry is kept with this `available_at`, so no relay runs it again until an operator
 * re-queues it (`npm run outbox -- retry`); its `last_error` says why.
 */
export const OUTBOX_FAILED_AT = 'infinity';

/**
 * Whether a handler's error is a refusal of the work itself, which the same call would get again:
 * a service answered 400, 413 or 422. Anything else (unreachable, 5xx, 404 from a service still
 * being deployed, 409, 429) may pass, and is retried.
 */
export function isRefusal(error: Error): boolean {
  return error instanceof ApiError && [400, 413, 422].includes(error.status);
}

/** How long an entry that has failed `attempts` times waits before its next run. */
export function outboxRetryDelayMs(attempts: number): number {
  return Math.min(RETRY_FIRST_MS * 2 ** Math.max(0, attempts - 1), RETRY_MAX_MS);
}

/** What running an entry reads of it. */
const ENTRY_FIELDS = ['id', 'applicationId', 'topic', 'payload', 'requestId', 'attempts'] as const;
type StoredEntry = Pick<OutboxRow, (typeof ENTRY_FIELDS)[number]>;

/**
 * The statement that records one entry in the schema's outbox and notifies its relays at commit:
 * $1 id, $2 application, $3 topic, $4 payload, $5 request id, $6 seconds before it is due, $7 the
 * channel. Exported so that the bench's raw-SQL baselines issue the very same text.
 */
export function outboxRecordStatement(schema: string, alongside?: string): string {
  // A CTE's write runs even when nothing reads it; its parameters follow the entry's seven.
  const before = alongside ? `alongside AS (${alongside.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + 7}`)}),\n  ` : '';
  return `WITH ${before}inserted AS (
    INSERT INTO "${schema}"."outbox" (id, application_id, topic, payload, request_id, available_at)
    VALUES ($1, $2, $3, $4, $5, clock_timestamp() + make_interval(secs => $6)) RETURNING 1)
  SELECT pg_notify($7, '') FROM inserted`;
}

// Over 80 lines: a factory whose functions share the table and the topics' schemas; each of them is short.
export function defineOutbox<T extends OutboxTopics>(schema: string, topics: T): Outbox<T> {
  const { name: table, pick } = outboxTable(schema);
  const entryColumns = pick(...ENTRY_FIELDS);
  const recordStatement = outboxRecordStatement(schema);

  /** The payload as its topic's schema reads it; an invalid one is a bug (a 500), never the client's fault. */
  function parsePayload(topic: string, payload: unknown): unknown {
    const schemaOfTopic = (topics as OutboxTopics)[topic];
    if (!schemaOfTopic) throw new Error(`${schema} outbox: no topic ${topic}`);
    try {
      return schemaOfTopic.parse(payload);
    } catch (error) {
      throw new Error(`${schema} outbox: invalid ${topic} payload: ${(error as Error).message}`, { cause: error });
    }
  }

  async function record(tx: Queryable, entries: readonly NewOutboxEntry<T>[], options: RecordOptions = {}): Promise<string[]> {
    const ids: string[] = [];
    const { alongside } = options;
    // One statement per entry, so each gets its own clock_timestamp() and they run in this order.
    // Each also notifies the relays, at commit and never if the transaction rolls back; Postgres
    // delivers the same notification of one transaction once.
    for (const [index, entry] of entries.entries()) {
      const payload = parsePayload(entry.topic, entry.payload);
      const id = randomUUID();
      const params = [id, entry.applicationId, entry.topic, JSON.stringify(payload), entry.requestId, (options.relayAfterMs ?? 0) / 1000, outboxChannel(schema)];
      if (index === 0 && alongside) await tx.query(outboxRecordStatement(schema, alongside.statement), [...params, ...alongside.params]);
      else await tx.query(recordStatement, params);
      ids.push(id);
    }
    if (entries.length === 0 && alongside) await tx.query(alongside.statement, [...alongside.params]);
    return ids;
  }

  // Over 80 lines: the processor's methods (process one, drain, backlog, relay) share its handlers and logger.
  function processor(db: DataSource, handlers: OutboxHandlers<T>, logger: Logger, batchHandlers: OutboxBatchHandlers<T> = {}): OutboxProcessor {
    const handlerOf = (topic: string) => (handlers as Record<string, OutboxHandlers<T>[TopicName<T>]>)[topic];
    const batchHandlerOf = (topic: string) => (batchHandlers as Record<string, OutboxBatchHandlers<T>[TopicName<T>]>)[topic];
    const asEntry = (entry: StoredEntry) => ({
      id: entry.id,
      applicationId: entry.applicationId,
      requestId: entry.requestId,
      payload: parsePayload(entry.topic, entry.payload) as never,
      attempts: entry.attempts,
    });

    /**
     * Runs a locked entry's handler and deletes it; when the handler fails, schedules the next
     * try and returns the error (the caller commits either way).
     */
    async function runLocked(tx: EntityManager, entry: StoredEntry): Promise<Error | null> {
      const attempt = entry.attempts + 1;
      const log = logger.child({
        outboxId: entry.id,
        topic: entry.topic,
        attempt,
        requestId: entry.requestId,
        applicationId: entry.applicationId,
      });
      try {
        await handlerOf(entry.topic)(asEntry(entry), log);
      } catch (caught) {
        const error = caught instanceof Error ? caught : new Error(String(caught));
        if (isRefusal(error)) {
          await tx.query(`UPDATE ${table} SET attempts = $2, last_error = $3, available_at = '${OUTBOX_FAILED_AT}' WHERE id = $1`, [
            entry.id,
            attempt,
            error.message,
          ]);
          // Retrying the same call gets the same refusal: kept, counted (outbox_entries_failed) and
          // listed by `npm run outbox -- failed`, never retried in a loop.
          log.error({ err: error.message }, 'outbox entry refused; kept as failed');
          return error;
        }
        const retryInMs = outboxRetryDelayMs(attempt);
        await tx.query(
          `UPDATE ${table} SET attempts = $2, last_error = $3, available_at = clock_timestamp() + make_interval(secs => $4) WHERE id = $1`,
          [entry.id, attempt, error.message, retryInMs / 1000],
        );
        // Never given up: the work was committed and must happen; the backlog metric shows it waiting.
        log.warn({ err: error.message, retryInMs }, 'outbox entry failed; retrying later');
        return error;
      }
      await tx.query(`DELETE FROM ${table} WHERE id = $1`, [entry.id]);
      log.info('outbox entry handled');
      return null;
    }

    /**
     * Runs locked consecutive entries of one topic through its batch handler and deletes them;
     * when the batch fails, runs each through its own handler instead.
     */
    async function runBatchLocked(tx: EntityManager, entries: StoredEntry[], proceed: () => boolean): Promise<void> {
      const { topic } = entries[0];
      const log = logger.child({ topic, entries: entries.length });
      try {
        await batchHandlerOf(topic)!(entries.map(asEntry), log);
      } catch (error) {
        log.warn({ err: (error as Error).message }, 'outbox batch failed; running its entries one by one');
        for (const entry of entries) if (proceed()) await runLocked(tx, entry);
        return;
      }
      await tx.query(`DELETE FROM ${table} WHERE id = ANY($1::uuid[])`, [entries.map((entry) => entry.id)]);
      log.info('outbox entries handled');
    }

    /**
     * Runs the oldest due entries, up to RELAY_BATCH_SIZE, in one transaction that holds the
     * schema's relay lock: relays run entries in order, one batch at a time, whichever process
     * they are in. Consecutive entries of a topic with a batch handler go to it together; every
     * other entry runs alone. Returns whether more may be due: only when it took a full batch, since
     * an entry recorded after its look wakes the relays again (NOTIFY) and gets a drain of its own.
     */
    async function runOldestDue(proceed: () => boolean): Promise<boolean> {
      return db.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`outbox:${schema}`]);
        // Not SKIP LOCKED: an entry a request is running (processNow) is waited for, not overtaken.
        const entries = await rows<StoredEntry>(
          tx,
          `SELECT ${entryColumns} FROM ${table} o WHERE o.available_at <= clock_timestamp()
           ORDER BY created_at, id LIMIT $1 FOR UPDATE`,
          [RELAY_BATCH_SIZE],
        );
        for (let start = 0; start < entries.length && proceed(); ) {
          const { topic } = entries[start];
          let end = start + 1;
          if (batchHandlerOf(topic)) while (end < entries.length && entries[end].topic === topic) end += 1;
          if (end - start > 1) await runBatchLocked(tx, entries.slice(start, end), proceed);
          else await runLocked(tx, entries[start]);
          start = end;
        }
        return entries.length === RELAY_BATCH_SIZE;
      });
    }

    const outboxProcessor: OutboxProcessor = {
      schema,

      async processNow(id) {
        const failure = await db.transaction(async (tx) => {
          const [entry] = await rows<StoredEntry>(tx, `SELECT ${entryColumns} FROM ${table} o WHERE o.id = $1 FOR UPDATE`, [id]);
          // Gone: a relay ran it meanwhile.
          if (!entry) return null;
          const error = await runLocked(tx, entry);
          // The relays planned their next look before this retry was scheduled: let them look again.
          if (error) await tx.query('SELECT pg_notify($1, $2)', [outboxChannel(schema), '']);
          return error;
        });
        if (failure) throw failure;
      },

      async drain(proceed = () => true) {
        while (proceed() && (await runOldestDue(proceed)));
        // Measured by Postgres's clock, which also set available_at.
        const [next] = await rows<{ ms: number | null }>(
          db,
          `SELECT (extract(epoch FROM min(available_at) - clock_timestamp()) * 1000)::float8 AS ms FROM ${table} WHERE available_at <> '${OUTBOX_FAILED_AT}'`,
        );
        return next.ms === null ? null : Math.max(0, next.ms);
      },

      async backlog() {
        const [row] = await rows<{ entries: number; age: number | null; failed: number }>(
          db,
          `SELECT count(*) FILTER (WHERE NOT failed)::int AS entries, count(*) FILTER (WHERE failed)::int AS failed,
             extract(epoch FROM clock_timestamp() - min(created_at) FILTER (WHERE NOT failed))::float8 AS age
           FROM (SELECT created_at, available_at = '${OUTBOX_FAILED_AT}' AS failed FROM ${table}) entries`,
        );
        return { entries: row.entries, oldestAgeSeconds: row.age ?? 0, failed: row.failed };
      },

      startRelay(options) {
        const { url } = db.options as { url?: string };
        if (!url) throw new Error(`the ${schema} outbox relay needs a data source configured with a url`);
        return startOutboxRelay(outboxProcessor, url, logger, options);
      },
    };
    return outboxProcessor;
  }

  return { schema, topics, record, processor };
}
