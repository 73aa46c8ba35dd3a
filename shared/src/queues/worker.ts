/** Consuming a queue: one worker per queue, refusing to start unless it handles every job name. */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createRedis, logRedisErrors, queuePrefix } from '../redis.js';
import type { ObjectSchema, Shape } from '../schema/index.js';
import { JobRejectedError, QUEUES, type JobData, type JobName, type QueueConnection, type QueueName } from './contract.js';

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

  const connection = logRedisErrors(createRedis(options.redisUrl, { maxRetriesPerRequest: null }), options.logger);
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
