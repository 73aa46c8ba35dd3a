/**
 * Jobs of the identity-batch queue. `batch.apply` writes one POST /v1/batch, read from its record
 * (the job carries only its id), in one transaction; an API error it raises (unknown members, a
 * new group without a name) is the client's fault and fails the job without retries (startWorker
 * turns it into a JobRejectedError); anything else (database unreachable, a deadlock) is retried
 * with backoff, which is safe because applying a batch twice ends in the same state. The batch's
 * record (identity.batches) keeps its outcome; a batch whose last attempt failed for another
 * reason is recorded failed with an internal error.
 */
import { ApiError, drainBatches, type JobHandlers, type PendingJob } from '@collab/shared';
import type { Job } from 'bullmq';
import type { DataSource } from 'typeorm';
import { applyBatch } from '../domain/batch/apply-batch.js';
import type { IdentityNotices } from '../domain/notices.js';
import { batchRepository } from '../repositories/batch.repository.js';

/** Finished batch records deleted per statement when pruning. */
const PRUNE_BATCH_SIZE = 1000;

const isLastAttempt = (job: Job) => job.attemptsMade + 1 >= (job.opts.attempts ?? 1);

export function batchJobs(db: DataSource, directoryChanged: IdentityNotices['directoryChanged']): JobHandlers<'identity-batch'> {
  return {
    'batch.apply': async ({ applicationId, batchId }, job, log) => {
      try {
        const result = await applyBatch(db, applicationId, batchId);
        await directoryChanged(applicationId);
        log.info({ batchId }, result.message);
        return result;
      } catch (error) {
        const rejected = error instanceof ApiError && error.status < 500;
        // Should the database be what fails, the record stays unfinished and is queued again later.
        if (!rejected && isLastAttempt(job))
          await batchRepository.fail(db, batchId, new ApiError('error').toBody()).catch(() => undefined);
        throw error;
      }
    },
  };
}

/**
 * Housekeeping and recovery of the identity worker: prunes the records of batches finished longer
 * ago than their retention, and returns a job for every batch not finished (its job may have been
 * lost with Redis), under the batch's own id so that a job still in Redis is not queued twice.
 */
export async function pendingBatches(
  db: DataSource,
  retention: { completedHours: number; failedHours: number },
): Promise<PendingJob<'identity-batch'>[]> {
  await drainBatches(() => batchRepository.prune(db, 'completed', retention.completedHours, PRUNE_BATCH_SIZE));
  await drainBatches(() => batchRepository.prune(db, 'failed', retention.failedHours, PRUNE_BATCH_SIZE));
  const unfinished = await batchRepository.unfinished(db);
  return unfinished.map(({ jobId, applicationId }) => ({
    name: 'batch.apply',
    data: { applicationId, requestId: 'pending-work', batchId: jobId },
    key: `batch-${jobId}`,
    jobId,
  }));
}
