/**
 * The outbox relay of a worker process: drains one outbox when a commit recorded entries (it
 * LISTENs to the outbox's channel), when an entry that failed falls due again, and at least every
 * `pollMs` in case a notification was missed. Its listening connection is opened again whenever
 * it is lost (a Postgres restart), and a reconnect drains at once: what was recorded meanwhile
 * waits no longer than that.
 */
import pg from 'pg';
import type { Logger } from '../logger.js';

/** Runs the entries of one outbox: what the request path and the relay use. */
export interface OutboxProcessor {
  readonly schema: string;
  /**
   * Runs the entry now, unless it has already run: takes its row lock (waiting while the relay
   * runs it), runs its handler and deletes it. When the handler fails, schedules its retry and
   * throws the handler's error.
   */
  processNow(id: string): Promise<void>;
  /**
   * Runs every due entry, oldest first, while `proceed` allows (a stopping relay ends after the entry
   * in progress); returns the milliseconds until the next one is due (null: none left).
   */
  drain(proceed?: () => boolean): Promise<number | null>;
  /** Entries waiting, the age of the oldest, and entries kept as failed, for the metrics. */
  backlog(): Promise<{ entries: number; oldestAgeSeconds: number; failed: number }>;
  /** Starts a relay that drains this outbox whenever an entry is recorded or falls due. */
  startRelay(options: OutboxRelayOptions): OutboxRelay;
}

export interface OutboxRelayOptions {
  /** Drains at least this often, besides when woken. */
  pollMs: number;
}

export interface OutboxRelay {
  /** Stops waking up, closes the listening connection and waits for the drain in progress. */
  stop(): Promise<void>;
}

/** The LISTEN/NOTIFY channel on which a commit that recorded entries in `schema` wakes its relays. */
export function outboxChannel(schema: string): string {
  return `${schema}_outbox`;
}

/** The first reconnect of the listener waits this long, each further one twice as long, up to the maximum. */
const LISTEN_RETRY_FIRST_MS = 250;
const LISTEN_RETRY_MAX_MS = 10_000;

// Over 80 lines: the relay's loop, its LISTEN connection with reconnects and its stop share their state.
export function startOutboxRelay(processor: OutboxProcessor, databaseUrl: string, logger: Logger, options: OutboxRelayOptions): OutboxRelay {
  const log = logger.child({ outbox: processor.schema });
  let stopped = false;
  let draining: Promise<void> | null = null;
  /** Woken while draining: drain once more, for what the running drain may have missed. */
  let wokenMeanwhile = false;
  let wakeTimer: NodeJS.Timeout | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let listener: pg.Client | null = null;
  let listenFailures = 0;

  async function drainWhileWoken(): Promise<void> {
    let nextInMs: number;
    do {
      wokenMeanwhile = false;
      try {
        const dueInMs = await processor.drain(() => !stopped);
        nextInMs = dueInMs === null ? options.pollMs : Math.min(dueInMs, options.pollMs);
      } catch (error) {
        // Postgres unreachable: the next poll (or the listener's reconnect) tries again.
        log.warn({ err: (error as Error).message }, 'outbox not drained; trying again later');
        nextInMs = options.pollMs;
      }
    } while (wokenMeanwhile && !stopped);
    draining = null;
    clearTimeout(wakeTimer);
    if (!stopped) wakeTimer = setTimeout(wake, nextInMs);
  }

  function wake(): void {
    if (stopped) return;
    if (draining) wokenMeanwhile = true;
    else draining = drainWhileWoken();
  }

  async function listen(): Promise<void> {
    const client = new pg.Client({
      connectionString: databaseUrl,
      application_name: `${processor.schema}-outbox-relay`,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
    });
    listener = client;
    let lost = false;
    const onLost = (error: Error) => {
      if (lost) return;
      lost = true;
      if (listener === client) listener = null;
      client.end().catch(() => undefined);
      if (stopped) return;
      listenFailures += 1;
      const retryInMs = Math.min(LISTEN_RETRY_FIRST_MS * 2 ** (listenFailures - 1), LISTEN_RETRY_MAX_MS);
      log.warn({ err: error.message, retryInMs }, 'outbox listener disconnected; reconnecting');
      reconnectTimer = setTimeout(() => void listen(), retryInMs);
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('connection ended')));
    client.on('notification', wake);
    try {
      await client.connect();
      await client.query(`LISTEN "${outboxChannel(processor.schema)}"`);
    } catch (error) {
      onLost(error as Error);
      return;
    }
    listenFailures = 0;
    // What was recorded while nothing listened.
    wake();
  }

  void listen();
  wake();

  return {
    async stop() {
      stopped = true;
      clearTimeout(wakeTimer);
      clearTimeout(reconnectTimer);
      await listener?.end().catch(() => undefined);
      await draining;
    },
  };
}
