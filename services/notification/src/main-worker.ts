/** Notification worker: drains the notification-purge queue. Scaled separately from the API. */
import { runWorkerMain } from '@collab/shared';
import { loadNotificationConfig } from './config.js';
import { createNotificationDataSource } from './data-source.js';
import { pendingPurges, purgeJobs } from './jobs/purge.jobs.js';

runWorkerMain({
  name: 'notification-worker',
  queue: 'notification-purge',
  loadConfig: () => loadNotificationConfig(),
  createDataSource: createNotificationDataSource,
  jobs: (db, config) => purgeJobs(db, config.PURGE_BATCH_SIZE),
  pendingJobs: pendingPurges,
});
