/** The notification service's dependencies and app, wired once for the API process and for tests. */
import { cascadeRouter, createInternalClient, createProducer, createRedis, identityDirectory, type Logger } from '@collab/shared';
import { storageReadiness } from '@collab/shared/storage';
import { createNotificationApp } from './app.js';
import type { NotificationConfig } from './config.js';
import { createNotificationDataSource } from './data-source.js';
import { applyCascade } from './domain/cascade/cascade.js';

export async function createNotificationService(config: NotificationConfig, logger: Logger, isDraining?: () => boolean) {
  const db = createNotificationDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
  await db.initialize();
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const identity = identityDirectory(
    createInternalClient({ baseUrl: config.IDENTITY_URL, internalToken: config.INTERNAL_TOKEN, service: 'identity', timeoutMs: 3000 }),
  );
  const ctx = { db, identity };
  const purgeQueue = createProducer('notification-purge', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const app = createNotificationApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    internal: cascadeRouter((applicationId, target, requestId) => applyCascade({ db, purgeQueue }, applicationId, target, requestId)),
    isDraining,
    readiness: storageReadiness(db, redis),
  });
  return {
    app,
    ctx,
    async close() {
      await purgeQueue.close();
      redis.disconnect();
      await db.destroy();
    },
  };
}
