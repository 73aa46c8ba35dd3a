/**
 * Queues are the contract between producers and consumers: names, job names and payload schemas
 * live here, and a worker refuses to start unless it handles every job name of its queue.
 * Names are kebab-case `<context>-<purpose>`; job names `<entity>.<verb>`; payloads carry ids,
 * the tenant and the request id, never secrets.
 */
import { UnrecoverableError, type JobsOptions } from 'bullmq';
import { ApiError, isErrorBody } from '../errors.js';
import { s, type Infer, type ObjectSchema, type Shape } from '../schema/index.js';

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
  'webhooks-purge': {
    'marked.purge': s.object(tenantJob),
    'application.purge': s.object(tenantJob),
  },
  'webhooks-delivery': {
    /** One attempt to send one (event, URL) delivery recorded in webhooks.deliveries. */
    'delivery.send': s.object({ ...tenantJob, deliveryId: s.uuid() }),
  },
  'mail-send': {
    /**
     * Sends the mail recorded in mail.mails as `mailId` (the job's id too), at most once: queued
     * with the e-mail delay, and its gates and content read when it runs.
     */
    'mail.send': s.object({ ...tenantJob, mailId: s.uuid() }),
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
  // An SMTP server that refuses or cannot be reached is retried for about a day (decision 55):
  // 1 s doubling, capped by BullMQ's backoff at 2^attempts, so 17 attempts span ~36 h in total.
  'mail-send': {
    attempts: 17,
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
  },
  'identity-batch': {
    removeOnComplete: { age: 24 * 3600, count: 1000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
  },
  // An import runs for minutes; one that fails for good keeps its outcome in its record, so a
  // short retention suffices. Each retry resumes where the last stopped, and they must outlast a
  // service that is down or restarting (the chaos run saw a restart take 38 s on a busy machine,
  // past the 15 s that 5 attempts wait): 1 s doubling, 12 attempts wait ~34 min in total.
  'identity-import': {
    attempts: 12,
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
