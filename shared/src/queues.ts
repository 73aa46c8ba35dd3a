/**
 * Queues are the contract between producers and consumers: names, job names and payload schemas
 * live here, and a worker refuses to start unless it handles every job name of its queue.
 * Names are kebab-case `<context>-<purpose>`; job names `<entity>.<verb>`; payloads carry ids,
 * the tenant and the request id, never secrets.
 */
import { Queue, UnrecoverableError, Worker, type Job, type JobsOptions } from 'bullmq';
import type { Logger } from './logger.js';
import { createRedis } from './redis.js';
import { s, type Infer, type ObjectSchema, type Shape } from './schema/index.js';

const tenantJob = { applicationId: s.uuid(), requestId: s.string() };

export const QUEUES = {
  'conversation-purge': {
    /** Removes the rows a deletion marked (group, user) in bounded batches. */
    'marked.purge': s.object(tenantJob),
    /** Removes everything of a deleted application in bounded batches. */
    'application.purge': s.object(tenantJob),
  },
  'notification-purge': {
    'marked.purge': s.object(tenantJob),
    'application.purge': s.object(tenantJob),
  },
} as const satisfies Record<string, Record<string, ObjectSchema<Shape>>>;

export type QueueName = keyof typeof QUEUES;
export type JobName<Q extends QueueName> = keyof (typeof QUEUES)[Q] & string;
export type JobData<Q extends QueueName, N extends JobName<Q>> = Infer<(typeof QUEUES)[Q][N]>;

/** Retries with exponential backoff; completed jobs kept an hour, failed ones a week. */
export const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

export interface QueueConnection {
  redisUrl: string;
  /** BullMQ key prefix (REDIS_PREFIX), so several systems can share one Redis. */
  prefix: string;
}

/** A producer for one queue, whose `add` validates the payload against the contract. */
export function createProducer<Q extends QueueName>(name: Q, connection: QueueConnection) {
  // Fail fast when Redis is down: the request answers 503 instead of waiting forever.
  const redis = createRedis(connection.redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const queue = new Queue(name, { connection: redis, prefix: connection.prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
  return {
    async add<N extends JobName<Q>>(jobName: N, data: JobData<Q, N>, options: JobsOptions = {}) {
      const schema = (QUEUES[name] as Record<string, ObjectSchema<Shape>>)[jobName];
      return queue.add(jobName, schema.parse(data), options);
    },
    async close() {
      await queue.close();
      redis.disconnect();
    },
  };
}

export type Producer<Q extends QueueName> = ReturnType<typeof createProducer<Q>>;

export type JobHandlers<Q extends QueueName> = {
  [N in JobName<Q>]: (data: JobData<Q, N>, job: Job, log: Logger) => Promise<unknown>;
};

/**
 * Starts a worker for one queue. Every job name of the queue must have a handler; a payload that
 * fails its schema is unrecoverable (retrying cannot fix it). Log lines carry the job's id, name,
 * attempt and the request id of the request that caused it.
 */
export function startWorker<Q extends QueueName>(
  name: Q,
  handlers: JobHandlers<Q>,
  options: QueueConnection & { logger: Logger; concurrency?: number; lockDurationMs?: number },
): Worker {
  const expected = Object.keys(QUEUES[name]);
  const given = Object.keys(handlers);
  const missing = expected.filter((job) => !given.includes(job));
  const unknown = given.filter((job) => !expected.includes(job));
  if (missing.length > 0 || unknown.length > 0)
    throw new Error(`${name}: handlers do not match the queue's jobs (missing: ${missing.join(', ') || 'none'}; unknown: ${unknown.join(', ') || 'none'})`);

  const connection = createRedis(options.redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', (error) => options.logger.warn({ err: error.message }, 'redis connection error'));
  const worker = new Worker(
    name,
    async (job) => {
      const schema = (QUEUES[name] as Record<string, ObjectSchema<Shape>>)[job.name];
      let data: Record<string, unknown>;
      try {
        data = schema.parse(job.data) as Record<string, unknown>;
      } catch (error) {
        throw new UnrecoverableError(`invalid payload: ${(error as Error).message}`);
      }
      const log = options.logger.child({ jobId: job.id, jobName: job.name, attempt: job.attemptsMade + 1, requestId: data.requestId, applicationId: data.applicationId });
      log.info('job started');
      const handler = handlers[job.name as JobName<Q>] as (data: unknown, job: Job, log: Logger) => Promise<unknown>;
      const result = await handler(data, job, log);
      log.info('job completed');
      return result;
    },
    {
      connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 2,
      lockDuration: options.lockDurationMs ?? 30_000,
      // Look for jobs whose worker died as often as a lock can expire.
      stalledInterval: options.lockDurationMs ?? 30_000,
      // A job whose worker died is retried after its lock expires, up to this many times.
      maxStalledCount: 10,
    },
  );
  worker.on('failed', (job, error) => options.logger.warn({ jobId: job?.id, jobName: job?.name, err: error.message }, 'job failed'));
  worker.on('error', (error) => options.logger.warn({ err: error.message }, 'worker error'));
  return worker;
}
