/** The notification service's dependencies and app, wired once for the API process and for tests. */
import { conversationDirectory, createInternalClient, createProducer, createRedis, identityDirectory, type Logger } from '@collab/shared';
import { createIdempotencyStore, storageReadiness } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { createNotificationApp } from './app.js';
import type { NotificationConfig, NotificationWorkerConfig } from './config.js';
import { createNotificationDataSource } from './data-source.js';
import { NOTIFICATION_SCHEMA } from './entities/index.js';
import { applyCascade } from './domain/cascade/cascade.js';
import { eventsProcessor } from './domain/events/relay.js';
import type { NotificationContext } from './domain/notifications/notifications.js';
import { internalRouter } from './http/internal.router.js';

/** What the use cases need, for the API process and the worker alike. */
export function notificationContext(db: DataSource, config: NotificationConfig): NotificationContext {
  const client = (service: string, baseUrl: string) =>
    createInternalClient({ baseUrl, internalToken: config.INTERNAL_TOKEN, service, timeoutMs: 3000 });
  return {
    db,
    identity: identityDirectory(client('identity', config.IDENTITY_URL)),
    conversation: conversationDirectory(client('conversation', config.CONVERSATION_URL)),
  };
}

/** The relay of recorded notification-created events into the webhooks service (run by the worker). */
export function notificationEvents(ctx: NotificationContext, config: NotificationWorkerConfig, logger: Logger) {
  const webhooks = createInternalClient({ baseUrl: config.WEBHOOKS_URL, internalToken: config.INTERNAL_TOKEN, service: 'webhooks', timeoutMs: 10_000 });
  return eventsProcessor(ctx, webhooks, logger);
}

export async function createNotificationService(config: NotificationConfig, logger: Logger, isDraining?: () => boolean) {
  const db = createNotificationDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
  await db.initialize();
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const ctx = notificationContext(db, config);
  const purgeQueue = createProducer('notification-purge', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const app = createNotificationApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    internal: internalRouter(ctx, (applicationId, target, requestId) => applyCascade({ db, purgeQueue }, applicationId, target, requestId)),
    isDraining,
    readiness: storageReadiness(db, redis),
    idempotency: createIdempotencyStore(db, { schema: NOTIFICATION_SCHEMA, ttlHours: config.IDEMPOTENCY_TTL_HOURS }),
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
