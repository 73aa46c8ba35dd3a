/**
 * POST /v1/batch and GET /v1/batch/<jobID>: validate synchronously, record the
 * batch in Postgres (identity.batches: nothing is lost should Redis lose the job, the identity
 * worker queues it again), queue it as one `batch.apply` job, wait for it a while, and report on
 * it afterwards from its record.
 *
 * Waiting uses the producer's `waitForOutcome`: BullMQ's QueueEvents (the `completed:<id>` /
 * `failed:<id>` events) with a look at the job's state every 500 ms in case an event is missed.
 * A failed attempt that BullMQ will retry does not end the wait; only completion or a final
 * failure does, and a rejection (the client's fault) is final at once.
 */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  apiErrorOfFailure,
  ENQUEUE_TIMEOUT_MS,
  type Logger,
  type Producer,
  type Queryable,
  type RecordWrite,
  unavailable,
} from '@collab/shared';
import type { DataSource } from 'typeorm';
import { batchRepository } from '../../repositories/batch.repository.js';
import { batchMessage, missingGroupName, namelessGroups, planBatch, type BatchInput } from './batch-plan.js';

export type BatchQueue = Pick<Producer<'identity-batch'>, 'add' | 'waitForOutcome'>;

export interface BatchContext {
  db: DataSource;
  logger: Logger;
  queue: BatchQueue;
  /** BATCH_WAIT_MS: how long a request waits for its job before answering 202. */
  waitMs: number;
}

export type BatchSubmission = { kind: 'applied'; message: string; jobId: string } | { kind: 'accepted'; jobId: string };

/** The error a failed job reports: its API error, or an opaque internal error. */
function failureError(reason: string | undefined): ApiError {
  return apiErrorOfFailure(reason) ?? new ApiError('error');
}

/**
 * Validates the batch (all or nothing: nothing is written or queued when any item is invalid),
 * queues it, and waits up to `waitMs` for the job: `applied` with the batch message, the job's API
 * error thrown as is, or `accepted` with the job id when the wait ran out.
 */
export async function submitBatch(
  ctx: BatchContext,
  applicationId: string,
  batch: BatchInput,
  options: {
    requestId: string;
    /** Called in the transaction that records the batch. */
    recordWrite: RecordWrite<string>;
    /** Called in the transaction that removes the record of a batch that could not be queued. */
    forgetWrite: (tx: Queryable) => Promise<void>;
  },
): Promise<BatchSubmission> {
  const { requestId } = options;
  const plan = planBatch(batch);
  const nameless = namelessGroups(plan);
  if (nameless.length > 0) {
    const existing = await batchRepository.existingGroupIds(
      ctx.db,
      applicationId,
      nameless.map((group) => group.id),
    );
    const missing = missingGroupName(nameless.filter((group) => !existing.has(group.id)));
    if (missing) throw missing;
  }

  const jobId = randomUUID();
  await ctx.db.transaction(async (tx) => {
    await batchRepository.record(tx, jobId, applicationId, batch);
    await options.recordWrite(tx, jobId);
  });
  try {
    await ctx.queue.add('batch.apply', { applicationId, requestId, batchId: jobId }, { jobId }, { timeoutMs: ENQUEUE_TIMEOUT_MS });
  } catch (error) {
    ctx.logger.warn({ err: (error as Error).message, requestId, applicationId }, 'batch not queued');
    // Answered 503: it must not be applied later. Should this fail too, the worker applies it
    // once Redis is back; repeating the batch converges either way.
    await ctx.db
      .transaction(async (tx) => {
        await batchRepository.forget(tx, jobId);
        await options.forgetWrite(tx);
      })
      .catch(() => undefined);
    throw unavailable('The batch could not be queued. Try again.');
  }

  const outcome = await ctx.queue.waitForOutcome(jobId, ctx.waitMs);
  if (outcome.state === 'completed') return { kind: 'applied', message: batchMessage(plan.counts), jobId };
  if (outcome.state === 'failed') throw failureError(outcome.reason);
  return { kind: 'accepted', jobId };
}

export type BatchStatus =
  | { status: 'waiting' | 'active' }
  | { status: 'completed'; message: string }
  | { status: 'failed'; error: { error: string; message: string } };

/**
 * The state of one of the application's batches, from its record (Postgres only: Redis may be
 * away); another application's or an unknown job is not found.
 */
export async function batchStatus(ctx: BatchContext, applicationId: string, jobId: string): Promise<BatchStatus> {
  const recorded = await batchRepository.find(ctx.db, applicationId, jobId.toLowerCase());
  if (!recorded) throw new ApiError('not_found', 'Batch job not found.');
  switch (recorded.state) {
    case 'completed':
      return { status: 'completed', message: recorded.message! };
    case 'failed':
      return { status: 'failed', error: recorded.error! };
    default:
      return { status: recorded.state };
  }
}
