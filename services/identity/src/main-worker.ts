/** Identity worker: drains the identity-batch queue (POST /v1/batch). Scaled separately from the API. */
import { runWorkerMain } from '@collab/shared';
import { loadIdentityWorkerConfig } from './config.js';
import { createIdentityDataSource } from './data-source.js';
import { batchJobs } from './jobs/batch.jobs.js';

runWorkerMain({
  name: 'identity-worker',
  queue: 'identity-batch',
  loadConfig: () => loadIdentityWorkerConfig(),
  createDataSource: createIdentityDataSource,
  jobs: (db) => batchJobs(db),
});
