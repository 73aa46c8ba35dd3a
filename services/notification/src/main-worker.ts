/** Notification worker: drains the notification-purge queue. Scaled separately from the API. */
import { createInternalClient, runWorkerMain } from '@collab/shared';
import { loadNotificationConfig } from './config.js';
import { createNotificationDataSource } from './data-source.js';
import { pendingPurges, purgeJobs } from './jobs/purge.jobs.js';

runWorkerMain({
  name: 'notification-worker',
  queue: 'notification-purge',
  loadConfig: () => loadNotificationConfig(),
  createDataSource: createNotificationDataSource,
  jobs: (db, config) =>
    purgeJobs(
      db,
      config.PURGE_BATCH_SIZE,
      // Asked before an application's data is purged: is it really gone?
      createInternalClient({ baseUrl: config.IDENTITY_URL, internalToken: config.INTERNAL_TOKEN, service: 'identity' }),
    ),
  pendingJobs: pendingPurges,
});
