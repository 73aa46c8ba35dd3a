/**
 * Identity worker: drains the identity-batch queue (POST /v1/batch) and the identity-import queue
 * (imports of customer dumps), queues again the recorded batches and imports whose job Redis
 * lost, prunes old batch records, and relays the deletion outbox into the other services. Scaled
 * separately from the API.
 */
import { runWorkerMain, SecretBox } from '@collab/shared';
import { loadIdentityWorkerConfig } from './config.js';
import { createIdentityDataSource } from './data-source.js';
import { IDENTITY_SCHEMA } from './entities/index.js';
import { deletionProcessor } from './domain/events/relay.js';
import { batchJobs, pendingBatches } from './jobs/batch.jobs.js';
import { identityImportJobs, pendingImports } from './jobs/import.jobs.js';
import { workerNotices } from './jobs/worker-notices.js';

/** Both queues' jobs send their notices over one connection, opened by whichever is built first. */
let notices: ReturnType<typeof workerNotices> | undefined;
const sharedNotices: typeof workerNotices = (config, onShutdown, logger) => (notices ??= workerNotices(config, onShutdown, logger));

runWorkerMain({
  name: 'identity-worker',
  queue: 'identity-batch',
  loadConfig: () => loadIdentityWorkerConfig(),
  createDataSource: createIdentityDataSource,
  jobs: (db, config, onShutdown, logger) => batchJobs(db, sharedNotices(config, onShutdown, logger).directoryChanged),
  pendingJobs: (db, config) =>
    pendingBatches(db, { completedHours: config.BATCH_RETENTION_HOURS, failedHours: config.BATCH_FAILED_RETENTION_HOURS }),
  extraQueues: [
    {
      queue: 'identity-import',
      jobs: (db, config, onShutdown, logger) =>
        identityImportJobs(db, config, new SecretBox(config.SECRETS_ENCRYPTION_KEY), sharedNotices(config, onShutdown, logger)),
      // One import at a time per worker: each streams its dump and keeps the services busy already.
      concurrency: () => 1,
      pendingJobs: pendingImports,
    },
  ],
  outbox: deletionProcessor,
  idempotencyKeys: IDENTITY_SCHEMA,
});
