/** The notification service's dependencies and app, wired once for the API process and for tests. */
import {
  conversationDirectory,
  createInternalClient,
  ApplicationVersions,
  identityDirectory,
  reusingIdentityDirectory,
  reusingWebhookTargets,
  webhookTargets,
  type Logger,
  type RedisClient,
} from '@collab/shared';
import { openServiceStores } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { createNotificationApp } from './app.js';
import type { NotificationConfig, NotificationWorkerConfig } from './config.js';
import { createNotificationDataSource } from './data-source.js';
import { notificationPurge } from './domain/cascade/cascade.js';
import { eventsProcessor } from './domain/events/relay.js';
import type { NotificationContext } from './domain/context.js';
import { internalRoutes } from './http/internal.routes.js';

/**
 * What the use cases need, for the API process and the worker alike. Identity's answers are reused
 * while the application's directory version, read over `redis`, is unchanged.
 */
export function notificationContext(db: DataSource, config: NotificationConfig, logger: Logger, redis: RedisClient): NotificationContext {
  const client = (service: string, baseUrl: string) =>
    createInternalClient({ baseUrl, internalToken: config.INTERNAL_TOKEN, service, timeoutMs: 3000 });
  const identity = identityDirectory(client('identity', config.IDENTITY_URL));
  const versions = new ApplicationVersions(redis, config.REDIS_PREFIX);
  return {
    db,
    versions,
    identity: reusingIdentityDirectory(identity, versions, logger),
    conversation: conversationDirectory(client('conversation', config.CONVERSATION_URL)),
  };
}

/** The relay of recorded notification-created events into the mail and webhooks services (run by the worker). */
export function notificationEvents(ctx: NotificationContext, config: NotificationWorkerConfig, logger: Logger) {
  const webhooks = createInternalClient({ baseUrl: config.WEBHOOKS_URL, internalToken: config.INTERNAL_TOKEN, service: 'webhooks', timeoutMs: 10_000 });
  const mail = createInternalClient({ baseUrl: config.MAIL_URL, internalToken: config.INTERNAL_TOKEN, service: 'mail', timeoutMs: 10_000 });
  return eventsProcessor(ctx, { webhooks, targets: reusingWebhookTargets(webhookTargets(webhooks), ctx.versions, logger), mail }, logger);
}

export async function createNotificationService(config: NotificationConfig, logger: Logger, isDraining?: () => boolean) {
  const stores = await openServiceStores({ dataSource: createNotificationDataSource(config.DATABASE_URL, config.DB_POOL_SIZE), config, logger });
  const ctx = notificationContext(stores.db, config, logger, stores.redis);
  const internal = internalRoutes(ctx, stores.receiveCascade(notificationPurge, 'notification-purge'));
  const idempotency = stores.idempotencyKeys({ ttlHours: config.IDEMPOTENCY_TTL_HOURS });
  const app = createNotificationApp(ctx, { logger, internalToken: config.INTERNAL_TOKEN, isDraining, readiness: stores.readiness, internal, idempotency });
  return { app, ctx, close: stores.close };
}
