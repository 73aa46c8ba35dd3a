/**
 * Identity worker: drains the identity-batch queue (POST /v1/batch), queues again the recorded
 * batches whose job Redis lost, prunes old batch records, and relays the deletion outbox into the
 * other services. Scaled separately from the API.
 */
import { runWorkerMain } from '@collab/shared';
import { loadIdentityWorkerConfig } from './config.js';
import { createIdentityDataSource } from './data-source.js';
import { IDENTITY_SCHEMA } from './entities/index.js';
import { deletionProcessor } from './domain/cascade/deletion-cascade.js';
import { batchJobs, pendingBatches } from './jobs/batch.jobs.js';

runWorkerMain({
  name: 'identity-worker',
  queue: 'identity-batch',
  loadConfig: () => loadIdentityWorkerConfig(),
  createDataSource: createIdentityDataSource,
  jobs: (db) => batchJobs(db),
  pendingJobs: (db, config) =>
    pendingBatches(db, { completedHours: config.BATCH_RETENTION_HOURS, failedHours: config.BATCH_FAILED_RETENTION_HOURS }),
  outbox: deletionProcessor,
  idempotencyKeys: IDENTITY_SCHEMA,
});
