/**
 * The transactional outbox against a real Postgres, on a schema of its own in a database of this
 * file: what a committed transaction records runs, in order; what rolled back never runs; a
 * failing handler is retried later; a request's processNow and a relay never run one entry twice;
 * a relay wakes on NOTIFY and listens again after losing its connection; an entry whose work is
 * refused is kept as failed until queued again.
 */
import { dropDatabase, until } from '@collab/shared/devkit';
import { randomBytes, randomUUID } from 'node:crypto';
import { ApiError, processMetrics, s, type Logger } from '@collab/shared';
import {
  createServiceDataSource,
  defineOutbox,
  ensureDatabase,
  failedOutboxEntries,
  outboxEntity,
  outboxTableMigration,
  retryFailedOutboxEntries,
  startOutboxRelay,
  type OutboxEntry,
  type OutboxProcessor,
  type OutboxRelay,
} from '@collab/shared/storage';
import pg from 'pg';
import { pino } from 'pino';
import type { DataSource } from 'typeorm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

const SCHEMA = 'outbox_test';
/** The pool's application_name, to find its connections in pg_stat_activity. */
const POOL_NAME = 'outbox-test-pool';
/** So long that no test can be passed by a poll: only a NOTIFY (or a start) wakes the relay. */
const NO_POLL_MS = 3_600_000;

const databaseName = `collab_test_outbox_${randomBytes(4).toString('hex')}`;
const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
url.pathname = `/${databaseName}`;
const databaseUrl = url.toString();

const outbox = defineOutbox(SCHEMA, { 'thing.happened': s.object({ n: s.integer() }), 'other.happened': s.object({ n: s.integer() }) });
type Entry = OutboxEntry<{ n: number }>;

let db: DataSource;
let sql: pg.Pool;
/** Lines the outbox logged, parsed. */
let logLines: Record<string, unknown>[];
let logger: Logger;
/** What the handler does with each entry; each test sets its own. */
let handle: (entry: Entry) => Promise<void>;
/** Payloads the handler was called with, in order. */
let handled: number[];
let processor: OutboxProcessor;
const relays: OutboxRelay[] = [];

beforeAll(async () => {
  await ensureDatabase(databaseUrl);
  db = createServiceDataSource({ url: databaseUrl, schema: SCHEMA, entities: [outboxEntity(SCHEMA)], migrations: [], applicationName: POOL_NAME, poolSize: 4 });
  await db.initialize();
  await db.query(`CREATE SCHEMA "${SCHEMA}"`);
  for (const statement of outboxTableMigration(SCHEMA).up) await db.query(statement);
  sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  sql.on('error', () => undefined);
});

afterAll(async () => {
  await db?.destroy();
  await sql?.end();
  await dropDatabase(databaseUrl, databaseName);
});

beforeEach(async () => {
  await db.query(`TRUNCATE "${SCHEMA}".outbox`);
  handled = [];
  handle = async () => undefined;
  logLines = [];
  logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) });
  processor = outbox.processor(db, handlers, logger);
});

const handlers = {
  'thing.happened': async (entry: Entry) => {
    handled.push(entry.payload.n);
    await handle(entry);
  },
  'other.happened': async (entry: Entry) => {
    handled.push(entry.payload.n);
  },
};

afterEach(async () => {
  await Promise.all(relays.splice(0).map((relay) => relay.stop()));
});

/** Records entries with these payloads in one committed transaction; returns their ids. */
function record(...numbers: number[]): Promise<string[]> {
  return recordTopics(numbers.map((n) => ['thing.happened', n]));
}

function recordTopics(entries: ['thing.happened' | 'other.happened', number][]): Promise<string[]> {
  return db.transaction((tx) =>
    outbox.record(
      tx,
      entries.map(([topic, n]) => ({ topic, applicationId: randomUUID(), requestId: `request-${n}`, payload: { n } })),
    ),
  );
}

const entriesLeft = async () => Number((await sql.query(`SELECT count(*) AS n FROM "${SCHEMA}".outbox`)).rows[0].n);

/** A promise that the test resolves itself, to hold a handler in the middle of its run. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Connections of this database waiting for a row lock. */
async function waitingForLocks(): Promise<number> {
  const { rows } = await sql.query(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND wait_event_type = 'Lock'`,
    [databaseName, POOL_NAME],
  );
  return rows[0].n;
}

/** The relay's listening connection, once it is listening. */
async function listenerPid(): Promise<number | null> {
  const { rows } = await sql.query(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND query LIKE 'LISTEN%'`,
    [databaseName, `${SCHEMA}-outbox-relay`],
  );
  return rows[0]?.pid ?? null;
}

/** A relay whose drains are counted, so that a test can tell when it has nothing left to do. */
function countedRelay(pollMs: number) {
  const drains = { started: 0, finished: 0 };
  const counted: OutboxProcessor = {
    ...processor,
    async drain() {
      drains.started += 1;
      try {
        return await processor.drain();
      } finally {
        drains.finished += 1;
      }
    },
  };
  relays.push(startOutboxRelay(counted, databaseUrl, logger, { pollMs }));
  const idle = () => drains.started > 0 && drains.started === drains.finished;
  return { drains, idle };
}

describe('recording', () => {
  it('validates the payload against its topic', async () => {
    await expect(
      db.transaction((tx) =>
        outbox.record(tx, [{ topic: 'thing.happened', applicationId: randomUUID(), requestId: 'r', payload: { n: 'one' as never } }]),
      ),
    ).rejects.toThrow('invalid thing.happened payload');
    expect(await entriesLeft()).toBe(0);
  });

  it('runs a write alongside the first entry, with its own placeholders, seeing the earlier writes; rolled back with it', async () => {
    await db.query(`CREATE TABLE "${SCHEMA}".alongside_rows (tag text, n int, seen bigint)`);
    const alongside = (tag: string) => ({
      statement: `INSERT INTO "${SCHEMA}".alongside_rows SELECT $1, $2, (SELECT count(*) FROM "${SCHEMA}".alongside_rows WHERE tag = $1)`,
      params: [tag, 7],
    });
    const entries = (n: number) => [1, 2].map((k) => ({ topic: 'thing.happened' as const, applicationId: randomUUID(), requestId: 'r', payload: { n: n + k } }));
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO "${SCHEMA}".alongside_rows VALUES ('kept', 0, 0)`);
      await outbox.record(tx, entries(10), { alongside: alongside('kept') });
    });
    await expect(
      db.transaction(async (tx) => {
        await outbox.record(tx, entries(20), { alongside: alongside('undone') });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const { rows } = await sql.query(`SELECT tag, n, seen::int AS seen FROM "${SCHEMA}".alongside_rows ORDER BY n`);
    expect(rows).toEqual([{ tag: 'kept', n: 0, seen: 0 }, { tag: 'kept', n: 7, seen: 1 }]);
    const payloads = await sql.query(`SELECT payload FROM "${SCHEMA}".outbox ORDER BY created_at, id`);
    expect(payloads.rows.map((row: { payload: { n: number } }) => row.payload.n).sort()).toEqual([11, 12]);
    await sql.query(`DELETE FROM "${SCHEMA}".outbox`);
  });
});

describe('a relay', () => {
  it('runs entries in the order they were recorded, within and across transactions, and deletes them', async () => {
    await record(1, 2);
    await record(3);
    await record(4, 5, 6);
    countedRelay(NO_POLL_MS);
    await until(async () => (await entriesLeft()) === 0, 'the entries to be handled', 10_000);
    expect(handled).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('never runs an entry whose transaction rolled back', async () => {
    await expect(
      db.transaction(async (tx) => {
        await outbox.record(tx, [{ topic: 'thing.happened', applicationId: randomUUID(), requestId: 'rolled-back', payload: { n: 1 } }]);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    // Recorded after it: once it has run, anything recorded before would have run first.
    await record(2);
    countedRelay(NO_POLL_MS);
    await until(async () => (await entriesLeft()) === 0, 'the later entry to be handled', 10_000);
    expect(handled).toEqual([2]);
  });

  it('retries a failing entry later, without holding up the next ones, and logs each failure with its request id', async () => {
    /** The stored entry as its retry found it. */
    let beforeRetry: unknown;
    handle = async (entry) => {
      if (entry.payload.n !== 1) return;
      if (entry.attempts === 0) throw new Error('receiver down');
      const { rows } = await sql.query(
        `SELECT attempts, last_error AS "lastError", available_at >= created_at + interval '1 second' AS "waited"
         FROM "${SCHEMA}".outbox WHERE id = $1`,
        [entry.id],
      );
      beforeRetry = rows[0];
    };
    await record(1);
    await record(2);
    countedRelay(NO_POLL_MS);
    await until(async () => (await entriesLeft()) === 0, 'the retry', 10_000);
    expect(handled).toEqual([1, 2, 1]);
    expect(beforeRetry).toEqual({ attempts: 1, lastError: 'receiver down', waited: true });
    const warning = logLines.find((line) => line.msg === 'outbox entry failed; retrying later');
    expect(warning).toMatchObject({ level: 40, requestId: 'request-1', topic: 'thing.happened', attempt: 1, err: 'receiver down', retryInMs: 1000 });
  });

  it('is woken by the commit of a new entry (NOTIFY), with no poll to find it', async () => {
    const { idle } = countedRelay(NO_POLL_MS);
    await until(async () => (await listenerPid()) !== null && idle(), 'the relay to listen, with nothing to do', 10_000);
    for (const n of [1, 2]) {
      await record(n);
      await until(async () => (await entriesLeft()) === 0 && idle(), `entry ${n} to be handled`, 10_000);
    }
    expect(handled).toEqual([1, 2]);
  });

  it('runs an entry recorded while it drains, with no poll to find it', async () => {
    const held = gate();
    handle = async (entry) => {
      if (entry.payload.n === 1) await held.opened;
    };
    const { idle } = countedRelay(NO_POLL_MS);
    await record(1);
    await until(async () => handled.length === 1, 'the first entry to be running', 10_000);
    await record(2);
    held.open();
    await until(async () => (await entriesLeft()) === 0 && idle(), 'the entry recorded meanwhile to be handled', 10_000);
    expect(handled).toEqual([1, 2]);
  });

  it('listens again after its connection is killed (a Postgres restart), and runs what was recorded meanwhile', async () => {
    const { idle } = countedRelay(NO_POLL_MS);
    await until(async () => (await listenerPid()) !== null && idle(), 'the relay to listen', 10_000);
    const first = await listenerPid();
    await sql.query('SELECT pg_terminate_backend($1)', [first]);
    await record(1);
    await until(async () => ![null, first].includes(await listenerPid()), 'a new listening connection', 10_000);
    await until(async () => (await entriesLeft()) === 0 && idle(), 'the entry recorded while it was disconnected', 10_000);
    // And NOTIFY wakes it again.
    await record(2);
    await until(async () => (await entriesLeft()) === 0, 'an entry recorded after it reconnected', 10_000);
    expect(handled).toEqual([1, 2]);
  });

  it('on stop, lets the entry it is running finish and closes its listening connection', async () => {
    const held = gate();
    handle = () => held.opened;
    countedRelay(NO_POLL_MS);
    await record(1);
    await until(async () => handled.length === 1, 'the handler to start', 10_000);
    let stopped = false;
    const stopping = relays.splice(0)[0].stop().then(() => (stopped = true));
    await until(async () => (await listenerPid()) === null, 'the listening connection to close', 10_000);
    expect(stopped).toBe(false);
    held.open();
    await stopping;
    expect(await entriesLeft()).toBe(0);
  });
});

describe('a drain', () => {
  it('runs every due entry, more than one batch of them', async () => {
    const numbers = Array.from({ length: 250 }, (_, index) => index);
    await record(...numbers);
    await processor.drain();
    expect(await entriesLeft()).toBe(0);
    expect(handled).toEqual(numbers);
  });
});

describe('processNow', () => {
  it('runs the entry and deletes it; a second call finds nothing to do', async () => {
    const [id] = await record(1);
    await processor.processNow(id);
    await processor.processNow(id);
    expect(handled).toEqual([1]);
    expect(await entriesLeft()).toBe(0);
  });

  it('throws the handler error after scheduling the retry', async () => {
    handle = async () => {
      throw new Error('receiver down');
    };
    const [id] = await record(1);
    await expect(processor.processNow(id)).rejects.toThrow('receiver down');
    const { rows } = await sql.query(`SELECT attempts, available_at > clock_timestamp() AS later FROM "${SCHEMA}".outbox`);
    expect(rows).toEqual([{ attempts: 1, later: true }]);
  });

  it('waits for a relay running the same entry, and the handler runs once', async () => {
    const held = gate();
    handle = () => held.opened;
    const [id] = await record(1);
    const draining = processor.drain();
    await until(async () => handled.length === 1, 'the relay to run the handler', 10_000);
    const now = processor.processNow(id);
    await until(async () => (await waitingForLocks()) === 1, 'processNow to wait for the entry', 10_000);
    held.open();
    await Promise.all([draining, now]);
    expect(handled).toEqual([1]);
    expect(await entriesLeft()).toBe(0);
  });

  it('makes a relay wait while it runs the entry, and the handler runs once', async () => {
    const held = gate();
    handle = () => held.opened;
    const [id] = await record(1);
    const now = processor.processNow(id);
    await until(async () => handled.length === 1, 'processNow to run the handler', 10_000);
    const draining = processor.drain();
    await until(async () => (await waitingForLocks()) === 1, 'the relay to wait for the entry', 10_000);
    held.open();
    await Promise.all([draining, now]);
    expect(handled).toEqual([1]);
    expect(await entriesLeft()).toBe(0);
  });
});

describe('a batch handler', () => {
  /** Payloads of each call of the batch handler. */
  let batches: number[][];
  let failBatch: boolean;
  beforeEach(() => {
    batches = [];
    failBatch = false;
    processor = outbox.processor(db, handlers, logger, {
      'thing.happened': async (entries) => {
        batches.push(entries.map((entry) => entry.payload.n));
        if (failBatch) throw new Error('the batch failed');
      },
    });
  });

  it('gets consecutive entries of its topic together, in order; the others and a lone entry run through their handlers', async () => {
    await recordTopics([
      ['thing.happened', 1],
      ['thing.happened', 2],
      ['thing.happened', 3],
      ['other.happened', 4],
      ['thing.happened', 5],
    ]);
    await processor.drain();
    expect(batches).toEqual([[1, 2, 3]]);
    expect(handled).toEqual([4, 5]);
    expect(await entriesLeft()).toBe(0);
    expect(logLines.find((line) => line.msg === 'outbox entries handled')).toMatchObject({ topic: 'thing.happened', entries: 3 });
  });

  it('that fails has each entry run alone: only the entry that keeps failing waits for its retry', async () => {
    failBatch = true;
    handle = async (entry) => {
      if (entry.payload.n === 2) throw new Error('receiver down');
    };
    await record(1, 2, 3);
    await processor.drain();
    expect(batches).toEqual([[1, 2, 3]]);
    expect(handled).toEqual([1, 2, 3]);
    const { rows } = await sql.query(`SELECT payload->>'n' AS n, attempts FROM "${SCHEMA}".outbox`);
    expect(rows).toEqual([{ n: '2', attempts: 1 }]);
    expect(logLines.find((line) => line.msg === 'outbox batch failed; running its entries one by one')).toMatchObject({ err: 'the batch failed', entries: 3 });
  });
});

describe('an entry recorded for its caller to run', () => {
  it('is left to the caller by the relays until its delay has passed', async () => {
    const [id] = await db.transaction((tx) =>
      outbox.record(tx, [{ topic: 'thing.happened', applicationId: randomUUID(), requestId: 'r', payload: { n: 1 } }], { relayAfterMs: 60_000 }),
    );
    expect(await processor.drain()).toBeGreaterThan(50_000);
    expect(handled).toEqual([]);
    await processor.processNow(id);
    expect(handled).toEqual([1]);
  });
});

describe('the backlog', () => {
  it('is reported as metrics: entries waiting and the age of the oldest', async () => {
    await record(1, 2);
    const metrics = processMetrics();
    metrics.watchOutbox(processor);
    const text = await metrics.metrics();
    expect(text).toContain(`outbox_entries_pending{schema="${SCHEMA}"} 2`);
    expect(text).toMatch(new RegExp(`outbox_oldest_entry_age_seconds\\{schema="${SCHEMA}"\\} \\d`));
  });
});

describe('an entry whose work is refused', () => {
  it('(413, 400, 422) is kept as failed with its reason, never run again by itself, counted apart from the backlog', async () => {
    handle = async (entry) => {
      if (entry.payload.n === 1) throw new ApiError('payload_too_large', 'Request body is larger than 40 MB.');
      if (entry.payload.n === 2) throw new ApiError('service_unavailable', 'The webhooks service is unavailable. Try again.');
    };
    const [refused, unavailable] = await record(1, 2, 3);
    expect(await processor.drain()).toBeGreaterThan(0);
    expect(handled).toEqual([1, 2, 3]);
    const { rows } = await sql.query(`SELECT id, attempts, last_error, available_at = 'infinity' AS failed FROM "${SCHEMA}".outbox ORDER BY created_at`);
    expect(rows).toEqual([
      { id: refused, attempts: 1, last_error: 'Request body is larger than 40 MB.', failed: true },
      { id: unavailable, attempts: 1, last_error: 'The webhooks service is unavailable. Try again.', failed: false },
    ]);
    expect(logLines.find((line) => line.msg === 'outbox entry refused; kept as failed')).toMatchObject({ outboxId: refused, err: 'Request body is larger than 40 MB.' });
    expect(await processor.backlog()).toMatchObject({ entries: 1, failed: 1 });
    const metrics = processMetrics();
    metrics.watchOutbox(processor);
    expect(await metrics.metrics()).toContain(`outbox_entries_failed{schema="${SCHEMA}"} 1`);
    expect(await failedOutboxEntries(db, SCHEMA)).toEqual([expect.objectContaining({ id: refused, topic: 'thing.happened', attempts: 1, lastError: 'Request body is larger than 40 MB.' })]);
  });

  it('runs again once queued again, and is gone when handled', async () => {
    let refuse = true;
    handle = async () => {
      if (refuse) throw new ApiError('invalid_field', 'An event payload must be an object.');
    };
    const [id] = await record(1);
    expect(await processor.drain()).toBeNull();
    refuse = false;
    expect(await retryFailedOutboxEntries(db, SCHEMA, [id])).toBe(1);
    expect(await retryFailedOutboxEntries(db, SCHEMA, 'all')).toBe(0);
    await processor.drain();
    expect(handled).toEqual([1, 1]);
    expect(await entriesLeft()).toBe(0);
  });
});
