/**
 * Notification worker: drains the notification-purge queue and relays the recorded
 * notification-created events to the webhooks service. Scaled separately from the API.
 */
import { runWorkerMain } from '@collab/shared';
import { loadNotificationWorkerConfig } from './config.js';
import { createNotificationDataSource } from './data-source.js';
import { NOTIFICATION_SCHEMA } from './entities/index.js';
import { pendingPurges, purgeJobs } from './jobs/purge.jobs.js';
import { notificationContext, notificationEvents } from './service.js';

runWorkerMain({
  name: 'notification-worker',
  queue: 'notification-purge',
  loadConfig: () => loadNotificationWorkerConfig(),
  createDataSource: createNotificationDataSource,
  jobs: (db, config) => purgeJobs(db, { batchSize: config.PURGE_BATCH_SIZE, rowsPerSecond: config.PURGE_ROWS_PER_SECOND }),
  pendingJobs: pendingPurges,
  outbox: (db, config, logger, redis) => notificationEvents(notificationContext(db, config, logger, redis), config, logger),
  idempotencyKeys: NOTIFICATION_SCHEMA,
});
