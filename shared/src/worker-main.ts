/** The body of every worker entry point: connect, drain one queue, stop cleanly on SIGTERM. */
import { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { loadConfig, metricsPortVar, WORKER_METRICS_PORTS } from './config.js';
import { ProcessLifecycle, runMain } from './lifecycle.js';
import { createLogger } from './logger.js';
import { processMetrics, serveMetrics } from './metrics.js';
import { startWorker, type JobHandlers, type QueueName } from './queues.js';
import { createRedis } from './redis.js';

interface WorkerConfig {
  DATABASE_URL: string;
  REDIS_URL: string;
  REDIS_PREFIX: string;
  LOG_LEVEL: string;
  DB_POOL_SIZE: number;
  WORKER_CONCURRENCY: number;
  JOB_LOCK_MS: number;
}

export function runWorkerMain<Q extends QueueName, C extends WorkerConfig>(options: {
  name: string;
  queue: Q;
  loadConfig: () => C;
  createDataSource: (url: string, poolSize: number) => DataSource;
  jobs: (db: DataSource, config: C) => JobHandlers<Q>;
}): void {
  runMain(options.name, async () => {
    const config = options.loadConfig();
    // Read apart from the service's config, whose METRICS_PORT default is its API's.
    const { METRICS_PORT } = loadConfig({ METRICS_PORT: metricsPortVar(WORKER_METRICS_PORTS[options.queue]) });
    const logger = createLogger(options.name, config.LOG_LEVEL);
    const lifecycle = new ProcessLifecycle(logger);
    const db = options.createDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
    await db.initialize();
    const worker = startWorker(options.queue, options.jobs(db, config), {
      redisUrl: config.REDIS_URL,
      prefix: config.REDIS_PREFIX,
      logger,
      concurrency: config.WORKER_CONCURRENCY,
      lockDurationMs: config.JOB_LOCK_MS,
    });
    // Queue depth, read from Redis when /metrics is scraped.
    const metrics = processMetrics();
    const queueConnection = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
    queueConnection.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
    const queue = new Queue(options.queue, { connection: queueConnection, prefix: config.REDIS_PREFIX });
    metrics.watchPool(options.name, db);
    metrics.watchWorker(worker, queue);
    lifecycle.onShutdown(async () => {
      await queue.close();
      queueConnection.disconnect();
    });
    await serveMetrics(lifecycle, METRICS_PORT, logger);
    // Runs first: close() lets active jobs finish; one cut off by the shutdown deadline is
    // retried by another worker once its lock expires.
    lifecycle.onShutdown(() => db.destroy());
    lifecycle.onShutdown(() => worker.close());
    lifecycle.installSignalHandlers();
    logger.info({ queue: options.queue }, 'worker started');
  });
}
