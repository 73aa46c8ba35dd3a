/** Webhooks worker: sends deliveries (webhooks-delivery queue) and purges deleted applications (webhooks-purge). Scaled separately from the API. */
import { createLogger, createOutboundClient, createProducer, runWorkerMain } from '@collab/shared';
import { loadWebhooksConfig } from './config.js';
import { createWebhooksDataSource } from './data-source.js';
import { guardedPoster } from './domain/deliveries/poster.js';
import { deliveryJobs, pendingDeliveries } from './jobs/delivery.jobs.js';
import { pendingPurges, purgeJobs } from './jobs/purge.jobs.js';
import { followApplications } from './service.js';

runWorkerMain({
  name: 'webhooks-worker',
  queue: 'webhooks-delivery',
  loadConfig: () => loadWebhooksConfig(),
  createDataSource: createWebhooksDataSource,
  jobs: (db, config, onShutdown) => {
    const logger = createLogger('webhooks-worker', config.LOG_LEVEL);
    const following = followApplications(config, logger);
    const queue = createProducer('webhooks-delivery', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
    onShutdown(async () => {
      await queue.close();
      (await following).close();
    });
    return deliveryJobs({
      db,
      credentials: { application: async (id, requestId) => (await following).applications.application(id, requestId) },
      post: guardedPoster(createOutboundClient({ allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS })),
      queue,
      retryWindowMs: config.WEBHOOK_RETRY_HOURS * 3600 * 1000,
    });
  },
  pendingJobs: (db, config) => pendingDeliveries(db, config.WEBHOOK_LOG_DAYS),
  extraQueues: [
    {
      queue: 'webhooks-purge',
      jobs: (db, config) => purgeJobs(db, { batchSize: config.PURGE_BATCH_SIZE, rowsPerSecond: config.PURGE_ROWS_PER_SECOND }),
      pendingJobs: pendingPurges,
      // Purges are rare and paced: one at a time beside the deliveries.
      concurrency: () => 1,
    },
  ],
});
