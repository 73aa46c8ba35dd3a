/**
 * Queues are the contract between producers and consumers: names, job names and payload schemas
 * live here, and a worker refuses to start unless it handles every job name of its queue.
 * Names are kebab-case `<context>-<purpose>`; job names `<entity>.<verb>`; payloads carry ids,
 * the tenant and the request id, never secrets.
 */
import { Queue, QueueEvents, UnrecoverableError, Worker, type Job, type JobsOptions } from 'bullmq';
import { ApiError, isErrorBody } from './errors.js';
import type { Logger } from './logger.js';
import { createRedis, queuePrefix } from './redis.js';
import { s, type Infer, type ObjectSchema, type Shape } from './schema/index.js';

const tenantJob = { applicationId: s.uuid(), requestId: s.string() };

export const QUEUES = {
  'conversation-purge': {
    /** Removes the rows a deletion marked (group, user) in bounded batches. */
    'marked.purge': s.object(tenantJob),
    /** Removes everything of a deleted application in bounded batches. */
    'application.purge': s.object(tenantJob),
  },
  'conversation-link-previews': {
    /**
     * Brings one message's link previews in line with its current content: `messageId` is the
     * message's internal id, which a PUT that renames the message does not change. Queued with
     * a deduplication id per message that keeps the last request made while a run is active, so
     * edits made while a run waits or runs end in at most one more run, which reads the latest content.
     */
    'message.preview': s.object({ ...tenantJob, messageId: s.string() }),
  },
  'notification-purge': {
    'marked.purge': s.object(tenantJob),
    'application.purge': s.object(tenantJob),
  },
  'webhooks-delivery': {
    /** One attempt to send one (event, URL) delivery recorded in webhooks.deliveries. */
    'delivery.send': s.object({ ...tenantJob, deliveryId: s.uuid() }),
  },
  'identity-batch': {
    /**
     * Applies one POST /v1/batch, validated by the request, in one transaction. `batchId` (the
     * job's id too) names the identity.batches row that holds the batch and records its outcome:
     * the body itself (up to 10 MB of users' names and e-mails) is never put in Redis, where a
     * finished job is kept for a day.
     */
    'batch.apply': s.object({ ...tenantJob, batchId: s.uuid() }),
  },
  'identity-import': {
    /**
     * Imports one customer dump recorded in identity.imports (its id is the job's id too), which
     * holds the dump itself: a customer-level job, so it names the customer, not an application.
     */
    'import.run': s.object({ customerId: s.uuid(), importId: s.uuid(), requestId: s.string() }),
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

/**
 * Options of one queue on top of DEFAULT_JOB_OPTIONS. GET /v1/batch/<jobID> reads a batch's
 * outcome from its record in Postgres; its job stays in Redis, for operators, a day after it
 * completes and a week after it fails, at most the latest 1000 of each.
 */
export const QUEUE_JOB_OPTIONS: Partial<Record<QueueName, JobsOptions>> = {
  'identity-batch': {
    removeOnComplete: { age: 24 * 3600, count: 1000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
  },
  // An import runs for minutes; one that fails for good keeps its outcome in its record, so few
  // retries (each resumes where the last stopped) and a short retention suffice.
  'identity-import': {
    attempts: 5,
    removeOnComplete: { age: 24 * 3600, count: 100 },
    removeOnFail: { age: 7 * 24 * 3600, count: 100 },
  },
  // A preview run only fails when Postgres or Redis does (a page that fails is an outcome): a few
  // retries cover an outage; the next edit of the message queues it again anyway.
  'conversation-link-previews': {
    attempts: 5,
    removeOnComplete: { age: 3600, count: 1000 },
    removeOnFail: { age: 24 * 3600, count: 1000 },
  },
};

/**
 * A job failure that is the client's fault (an ApiError with a 4xx status): never retried, and its
 * failed reason carries `{error, message, status}` so that whoever waits for the job, or reads its
 * status later, can answer with that error.
 */
export class JobRejectedError extends UnrecoverableError {
  constructor(readonly apiError: ApiError) {
    super(JSON.stringify({ error: apiError.code, message: apiError.message, status: apiError.status }));
  }
}

/** The API error a failed job's reason carries (see JobRejectedError), or null for any other failure. */
export function apiErrorOfFailure(reason: string | undefined): ApiError | null {
  if (!reason) return null;
  try {
    const parsed: unknown = JSON.parse(reason);
    const status = (parsed as { status?: unknown } | null)?.status;
    if (isErrorBody(parsed) && typeof status === 'number') return new ApiError(parsed.error, parsed.message, { status });
  } catch {
    // not a rejection: some other failure
  }
  return null;
}

/** Raised by `add` when Redis has not taken the job within its timeout. */
export class EnqueueTimeoutError extends Error {
  constructor(queue: string, timeoutMs: number) {
    super(`${queue}: Redis did not take the job within ${timeoutMs} ms`);
    this.name = 'EnqueueTimeoutError';
  }
}

/** How a job ended, as far as a waiting caller knows: `unfinished` when the wait ran out first. */
export type JobOutcome = { state: 'completed'; value: unknown } | { state: 'failed'; reason: string } | { state: 'unfinished' };

/** BullMQ's states of a job that exists (`unknown` means there is no such job). */
export type JobStateName = 'waiting' | 'active' | 'completed' | 'failed' | 'delayed' | 'prioritized' | 'waiting-children';

export interface JobSnapshot<Q extends QueueName> {
  id: string;
  name: JobName<Q>;
  state: JobStateName;
  data: { [N in JobName<Q>]: JobData<Q, N> }[JobName<Q>];
  returnValue: unknown;
  failedReason: string | undefined;
}

export interface QueueConnection {
  /** REDIS_URL: one server, or a cluster (`redis+cluster://…`). */
  redisUrl: string;
  /** REDIS_PREFIX, so several systems can share one Redis; each queue adds its hash tag (queuePrefix). */
  prefix: string;
}

/** How long a request waits for Redis to take a job, or to read one, before it answers 503 (Redis unreachable). */
export const ENQUEUE_TIMEOUT_MS = 1000;

/**
 * Work that Postgres records as pending (rows marked for purge, a batch not finished), as the job
 * that does it; `key` deduplicates it, so that re-enqueueing the same work again and again queues
 * it once. `jobId`, for work that has its own id (a batch, whose 202 named it): a job of that id
 * still kept in Redis, whatever its state, is not queued again.
 */
export type PendingJob<Q extends QueueName> = {
  [N in JobName<Q>]: { name: N; data: JobData<Q, N>; key: string; jobId?: string };
}[JobName<Q>];

/** How often a waiting caller also looks at the job's state, in case an event was missed. */
const OUTCOME_POLL_MS = 500;

/**
 * A producer for one queue, whose `add` validates the payload against the contract. It can also
 * wait for a job's outcome and read a job back (for callers that report on their jobs).
 */
export function createProducer<Q extends QueueName>(name: Q, connection: QueueConnection) {
  // Fail fast when Redis is down: the request answers 503 instead of waiting forever.
  const redis = createRedis(connection.redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  const queue = new Queue(name, {
    connection: redis,
    prefix: queuePrefix(connection.prefix, name),
    defaultJobOptions: { ...DEFAULT_JOB_OPTIONS, ...QUEUE_JOB_OPTIONS[name] },
  });
  // Connection errors surface as the failures of `add` and reads; without a listener BullMQ prints them.
  queue.on('error', () => undefined);
  // Created on the first wait: only producers that wait hold the extra (blocking) connection.
  let events: { queueEvents: QueueEvents; connection: ReturnType<typeof createRedis> } | null = null;
  const queueEvents = () => {
    if (!events) {
      const eventsConnection = createRedis(connection.redisUrl, { maxRetriesPerRequest: null });
      eventsConnection.on('error', () => undefined);
      const created = new QueueEvents(name, { connection: eventsConnection, prefix: queuePrefix(connection.prefix, name) });
      created.on('error', () => undefined);
      events = { queueEvents: created, connection: eventsConnection };
    }
    return events.queueEvents;
  };

  async function getJob(jobId: string): Promise<JobSnapshot<Q> | null> {
    // State first, then the job: a job read before it finished and a state read after would
    // report "failed" or "completed" without its reason or result.
    const state = await queue.getJobState(jobId);
    if (state === 'unknown') return null;
    const job = await queue.getJob(jobId);
    if (!job) return null;
    return {
      id: jobId,
      name: job.name as JobName<Q>,
      state: state as JobStateName,
      data: job.data as JobSnapshot<Q>['data'],
      returnValue: job.returnvalue,
      failedReason: job.failedReason,
    };
  }

  return {
    /**
     * Adds a job. With `timeoutMs`, rejects with EnqueueTimeoutError when Redis has not taken it
     * in time (Redis down: the request answers 503 at once); should Redis take it later anyway,
     * the job is removed again if no worker has started it, so that a caller told "unavailable"
     * sees no effect (best effort: a job a worker already started runs).
     */
    async add<N extends JobName<Q>>(jobName: N, data: JobData<Q, N>, options: JobsOptions = {}, limits: { timeoutMs?: number } = {}) {
      const schema = (QUEUES[name] as Record<string, ObjectSchema<Shape>>)[jobName];
      const adding = queue.add(jobName, schema.parse(data), options);
      if (limits.timeoutMs === undefined) return adding;
      let timer: NodeJS.Timeout | undefined;
      let timedOut = false;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(new EnqueueTimeoutError(name, limits.timeoutMs!));
        }, limits.timeoutMs);
      });
      adding.then(
        (job) => {
          if (timedOut) job.remove().catch(() => undefined);
        },
        () => undefined,
      );
      try {
        return await Promise.race([adding, deadline]);
      } finally {
        clearTimeout(timer);
      }
    },

    /**
     * Adds several jobs in one round trip to Redis (one pipeline), each validated like `add`'s;
     * their options (deduplication included) apply to each job as they would through `add`.
     */
    async addBulk<N extends JobName<Q>>(jobs: readonly { name: N; data: JobData<Q, N>; options?: JobsOptions }[]) {
      const schemas = QUEUES[name] as Record<string, ObjectSchema<Shape>>;
      return queue.addBulk(jobs.map((job) => ({ name: job.name, data: schemas[job.name].parse(job.data), opts: job.options })));
    },

    /**
     * Waits at most `timeoutMs` for the job to complete or to fail for good (a failed attempt that
     * will be retried does not end the wait). Listens to the queue's events, and also looks at the
     * job's state now and then, so that an event missed (the job finished before the listener
     * was reading, or a reconnect) only costs a little latency.
     */
    async waitForOutcome(jobId: string, timeoutMs: number): Promise<JobOutcome> {
      if (timeoutMs <= 0) return { state: 'unfinished' };
      const events = queueEvents();
      // Per-job event names (`completed:<id>`) are not in QueueEvents' typed listener map.
      const listener = events as unknown as NodeJS.EventEmitter;
      return new Promise<JobOutcome>((resolve) => {
        let settled = false;
        const timers: NodeJS.Timeout[] = [];
        const finish = (outcome: JobOutcome) => {
          if (settled) return;
          settled = true;
          for (const timer of timers) clearTimeout(timer);
          listener.off(`completed:${jobId}`, onCompleted);
          listener.off(`failed:${jobId}`, onFailed);
          resolve(outcome);
        };
        const onCompleted = (args: { returnvalue: unknown }) => finish({ state: 'completed', value: args.returnvalue });
        const onFailed = (args: { failedReason: string }) => finish({ state: 'failed', reason: args.failedReason });
        listener.on(`completed:${jobId}`, onCompleted);
        listener.on(`failed:${jobId}`, onFailed);
        timers.push(setTimeout(() => finish({ state: 'unfinished' }), timeoutMs));
        const look = async () => {
          if (settled) return;
          try {
            const state = await queue.getJobState(jobId);
            if (state === 'completed' || state === 'failed') {
              const job = await getJob(jobId);
              if (job?.state === 'completed') finish({ state: 'completed', value: job.returnValue });
              else if (job?.state === 'failed') finish({ state: 'failed', reason: job.failedReason ?? '' });
            }
          } catch {
            // Redis unreachable: the deadline answers.
          }
          if (!settled) timers.push(setTimeout(() => void look(), OUTCOME_POLL_MS));
        };
        // First look once the listener reads the stream: what finished before is seen by the look,
        // what finishes after by the listener.
        events.waitUntilReady().then(look, look);
      });
    },

    /** The job with its state, or null when there is no such job (never added, or removed after its retention). */
    getJob,

    /** Calls `listener` whenever the connection to Redis is established: at start and after every outage. */
    onReady(listener: () => void) {
      redis.on('ready', listener);
    },

    async close() {
      if (events) {
        await events.queueEvents.close().catch(() => undefined);
        events.connection.disconnect();
      }
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
      let result: unknown;
      try {
        result = await handler(data, job, log);
      } catch (error) {
        // The client's fault (validation, unknown ids): retrying cannot fix it.
        if (error instanceof ApiError && error.status < 500) {
          log.info({ error: error.code, message: error.message }, 'job rejected');
          throw new JobRejectedError(error);
        }
        throw error;
      }
      log.info('job completed');
      return result;
    },
    {
      connection,
      prefix: queuePrefix(options.prefix, name),
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
