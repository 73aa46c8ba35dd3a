/**
 * Jobs of the identity-batch queue. `batch.apply` writes one POST /v1/batch in one transaction;
 * an API error it raises (unknown members, a new group without a name) is the client's fault and
 * fails the job without retries (startWorker turns it into a JobRejectedError); anything else
 * (database unreachable, a deadlock) is retried with backoff, which is safe because applying a
 * batch twice ends in the same state.
 */
import type { JobHandlers } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { applyBatch } from '../domain/batch/apply-batch.js';

export function batchJobs(db: DataSource): JobHandlers<'identity-batch'> {
  return {
    'batch.apply': async ({ applicationId, batch }, _job, log) => {
      const result = await applyBatch(db, applicationId, batch);
      log.info({ users: result.users, groups: result.groups }, 'batch applied');
      return result;
    },
  };
}
