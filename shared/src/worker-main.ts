/**
 * The body of every worker entry point: connect, drain the service's queues, re-enqueue the work
 * Postgres records as pending, relay the service's outbox, prune its expired Idempotency-Keys,
 * stop cleanly on SIGTERM.
 */
import { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { loadConfig, metricsPortVar, WORKER_METRICS_PORTS } from './config.js';
import { ProcessLifecycle, runMain } from './lifecycle.js';
import { createLogger, type Logger } from './logger.js';
import { pruneExpiredIdempotencyKeys } from './idempotency/store.js';
import { processMetrics, serveMetrics } from './metrics.js';
// Types only: the outbox's code (pg) comes with the processor the service builds.
import type { OutboxProcessor } from './outbox/relay.js';
import { createProducer, startWorker, type JobHandlers, type PendingJob, type QueueName } from './queues/index.js';
import { checkRedisEviction, createRedis, logRedisErrors, queuePrefix, type RedisClient } from './redis.js';

interface WorkerConfig {
  DATABASE_URL: string;
  REDIS_URL: string;
  REDIS_PREFIX: string;
  LOG_LEVEL: string;
  DB_POOL_SIZE: number;
  WORKER_CONCURRENCY: number;
  JOB_LOCK_MS: number;
  /** Required by workers that relay an outbox (workerVars.OUTBOX_POLL_MS). */
  OUTBOX_POLL_MS?: number;
}

/** How often a worker re-enqueues pending work, besides at start and whenever Redis comes back. */
const RECOVERY_INTERVAL_MS = 60_000;

/** Expired Idempotency-Keys deleted per transaction. */
const IDEMPOTENCY_PRUNE_BATCH = 1000;

type OnShutdown = (close: () => Promise<unknown> | unknown) => void;

/** Any queue's pending work, as the recovery loop handles it (each queue's own type is checked where it is declared). */
type PendingJobsOf<C> = (db: DataSource, config: C) => Promise<{ name: string; data: unknown; key: string; jobId?: string }[]>;

/** Builds a queue's handlers; resources they open are closed through `onShutdown`. */
type JobsOf<Q extends QueueName, C> = (db: DataSource, config: C, onShutdown: OnShutdown, logger: Logger) => JobHandlers<Q>;

/** One more queue a worker process drains besides its main one, with its own handlers and concurrency. */
export interface ExtraQueue<Q extends QueueName, C> {
  queue: Q;
  jobs: JobsOf<Q, C>;
  /** Jobs of this queue run at once (default: the process's WORKER_CONCURRENCY). */
  concurrency?: (config: C) => number;
  /** The work of this queue Postgres records as pending (as the main queue's `pendingJobs`). */
  pendingJobs?: (db: DataSource, config: C) => Promise<PendingJob<Q>[]>;
}

// Over 80 lines: the worker process's start-up and shutdown in their order; split up, the order would be harder to see.
export function runWorkerMain<Q extends QueueName & keyof typeof WORKER_METRICS_PORTS, C extends WorkerConfig>(options: {
  name: string;
  /** The main queue: the process's metrics port is this queue's (WORKER_METRICS_PORTS). */
  queue: Q;
  loadConfig: () => C;
  createDataSource: (url: string, poolSize: number) => DataSource;
  jobs: JobsOf<Q, C>;
  /**
   * The work Postgres records as pending. A job lives only in Redis: one lost with Redis's data
   * (a restart without persistence), or never queued, is queued again from this. Also the place
   * for housekeeping of those records (pruning finished ones), which runs as often.
   */
  pendingJobs?: (db: DataSource, config: C) => Promise<PendingJob<Q>[]>;
  /** Further queues this process drains, each by its own BullMQ worker. */
  extraQueues?: { [E in QueueName]: ExtraQueue<E, C> }[QueueName][];
  /**
   * The service's outbox, with its handlers: this worker runs its relay, so that every entry a
   * committed transaction recorded is handled, retried until it succeeds. `redis`: the process's
   * connection for short commands, which fail fast while Redis is away.
   */
  outbox?: (db: DataSource, config: C, logger: Logger, redis: RedisClient) => OutboxProcessor;
  /** The service's schema whose expired Idempotency-Keys this worker prunes. */
  idempotencyKeys?: string;
}): void {
  runMain(options.name, async () => {
    const config = options.loadConfig();
    if (options.outbox && config.OUTBOX_POLL_MS === undefined)
      throw new Error(`${options.name}: its config must include OUTBOX_POLL_MS to relay an outbox`);
    // Read apart from the service's config, whose METRICS_PORT default is its API's.
    const { METRICS_PORT } = loadConfig({ METRICS_PORT: metricsPortVar(WORKER_METRICS_PORTS[options.queue]) });
    const logger = createLogger(options.name, config.LOG_LEVEL);
    const lifecycle = new ProcessLifecycle(logger);
    const db = options.createDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
    // Told apart from the API's connections in pg_stat_activity (e.g. collab-identity-worker).
    db.setOptions({ applicationName: `${(db.options as { applicationName: string }).applicationName}-worker` });
    await db.initialize();
    const onShutdown: OnShutdown = (close) => lifecycle.onShutdown(async () => close());
    const drains: { queue: QueueName; handlers: JobHandlers<QueueName>; concurrency: number }[] = [
      { queue: options.queue, handlers: options.jobs(db, config, onShutdown, logger) as JobHandlers<QueueName>, concurrency: config.WORKER_CONCURRENCY },
      // Each extra queue's handlers match its own name (the ExtraQueue type); startWorker checks them again.
      ...(options.extraQueues ?? []).map((extra) => ({
        queue: extra.queue,
        handlers: (extra.jobs as JobsOf<QueueName, C>)(db, config, onShutdown, logger),
        concurrency: extra.concurrency?.(config) ?? config.WORKER_CONCURRENCY,
      })),
    ];
    // Queue depth, read from Redis when /metrics is scraped.
    const metrics = processMetrics();
    metrics.watchPool(options.name, db);
    const queueConnection = logRedisErrors(createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 }), logger);
    // Registered before the queues' closes, so it runs after them (shutdown runs in reverse order).
    lifecycle.onShutdown(async () => queueConnection.disconnect());
    // The queues are this process's to drain: it says when Redis could lose their jobs.
    void checkRedisEviction(queueConnection, logger);
    const workers = drains.map(({ queue: name, handlers, concurrency }) => {
      const worker = startWorker(name, handlers, {
        redisUrl: config.REDIS_URL,
        prefix: config.REDIS_PREFIX,
        logger,
        concurrency,
        lockDurationMs: config.JOB_LOCK_MS,
      });
      const queue = new Queue(name, { connection: queueConnection, prefix: queuePrefix(config.REDIS_PREFIX, name) });
      // The connection's listener logs its errors; without one of its own, BullMQ prints them again.
      queue.on('error', () => undefined);
      metrics.watchWorker(worker, queue);
      lifecycle.onShutdown(() => queue.close());
      return worker;
    });
    const recoveries = [
      { queue: options.queue as QueueName, pendingJobs: options.pendingJobs as PendingJobsOf<C> | undefined },
      ...(options.extraQueues ?? []).map((extra) => ({ queue: extra.queue as QueueName, pendingJobs: extra.pendingJobs as PendingJobsOf<C> | undefined })),
    ];
    for (const { queue: name, pendingJobs } of recoveries) {
      if (!pendingJobs) continue;
      const producer = createProducer(name, { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
      const recover = async () => {
        try {
          const pending = await pendingJobs(db, config);
          for (const job of pending) await producer.add(job.name as never, job.data as never, { jobId: job.jobId, deduplication: { id: job.key } });
          if (pending.length > 0) logger.info({ queue: name, jobs: pending.length }, 'pending work queued');
        } catch (error) {
          logger.warn({ queue: name, err: (error as Error).message }, 'pending work not queued; trying again later');
        }
      };
      producer.onReady(() => void recover());
      const timer = setInterval(() => void recover(), RECOVERY_INTERVAL_MS);
      lifecycle.onShutdown(async () => {
        clearInterval(timer);
        await producer.close();
      });
    }
    if (options.idempotencyKeys) {
      const schema = options.idempotencyKeys;
      const prune = async () => {
        try {
          const pruned = await pruneExpiredIdempotencyKeys(db, schema, IDEMPOTENCY_PRUNE_BATCH);
          if (pruned > 0) logger.info({ pruned }, 'expired idempotency keys pruned');
        } catch (error) {
          logger.warn({ err: (error as Error).message }, 'expired idempotency keys not pruned; trying again later');
        }
      };
      void prune();
      const timer = setInterval(() => void prune(), RECOVERY_INTERVAL_MS);
      lifecycle.onShutdown(async () => clearInterval(timer));
    }
    await serveMetrics(lifecycle, METRICS_PORT, logger);
    // Runs first: close() lets active jobs finish; one cut off by the shutdown deadline is
    // retried by another worker once its lock expires.
    lifecycle.onShutdown(() => db.destroy());
    lifecycle.onShutdown(() => Promise.all(workers.map((worker) => worker.close())));
    if (options.outbox) {
      const outbox = options.outbox(db, config, logger, queueConnection);
      const relay = outbox.startRelay({ pollMs: config.OUTBOX_POLL_MS! });
      metrics.watchOutbox(outbox);
      // Registered last, so stopped first: its drain in progress finishes before the pool closes.
      lifecycle.onShutdown(() => relay.stop());
    }
    lifecycle.installSignalHandlers();
    logger.info({ queues: drains.map((drain) => drain.queue) }, 'worker started');
  });
}
