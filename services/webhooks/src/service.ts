/** The webhooks service's dependencies and app, wired once for the API process and for tests. */
import { createInternalClient, createProducer, createRedis, CredentialStore, type Logger } from '@collab/shared';
import { storageReadiness } from '@collab/shared/storage';
import { createWebhooksApp } from './app.js';
import type { WebhooksConfig } from './config.js';
import { createWebhooksDataSource } from './data-source.js';
import type { WebhooksContext } from './domain/context.js';
import { internalRouter } from './http/internal.router.js';

/** Application secrets and webhook settings from identity, cached and invalidated as identity publishes changes. */
export async function followApplications(config: WebhooksConfig, logger: Logger) {
  const identity = createInternalClient({ baseUrl: config.IDENTITY_URL, internalToken: config.INTERNAL_TOKEN, service: 'identity', timeoutMs: 3000 });
  const applications = new CredentialStore(identity, config.CREDENTIALS_CACHE_TTL_MS);
  const subscriber = createRedis(config.REDIS_URL);
  subscriber.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  await applications.subscribe(subscriber, config.REDIS_PREFIX, logger);
  return { applications, close: () => subscriber.disconnect() };
}

export async function createWebhooksService(config: WebhooksConfig, logger: Logger, isDraining?: () => boolean) {
  const db = createWebhooksDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
  await db.initialize();
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const following = await followApplications(config, logger);
  const deliveryQueue = createProducer('webhooks-delivery', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const ctx: WebhooksContext = { db, logger, applications: following.applications, deliveryQueue };
  const app = createWebhooksApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    internal: internalRouter(ctx),
    isDraining,
    readiness: storageReadiness(db, redis),
  });
  return {
    app,
    ctx,
    async close() {
      await deliveryQueue.close();
      following.close();
      redis.disconnect();
      await db.destroy();
    },
  };
}
