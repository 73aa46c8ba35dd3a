/** Adding jobs to a queue, waiting for their outcome and reading them back. */
import { Queue, QueueEvents, type JobsOptions } from 'bullmq';
import { createRedis, queuePrefix } from '../redis.js';
import type { ObjectSchema, Shape } from '../schema/index.js';
import { DEFAULT_JOB_OPTIONS, QUEUE_JOB_OPTIONS, QUEUES, type JobData, type JobName, type QueueConnection, type QueueName } from './contract.js';

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

/** How often a waiting caller also looks at the job's state, in case an event was missed. */
const OUTCOME_POLL_MS = 500;

/**
 * A producer for one queue, whose `add` validates the payload against the contract. It can also
 * wait for a job's outcome and read a job back (for callers that report on their jobs).
 */
// Over 80 lines: a factory whose methods (add, wait for an outcome, read a job, close) share one queue and its connection.
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
