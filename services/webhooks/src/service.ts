/** The webhooks service's dependencies and app, wired once for the API process and for tests. */
import { createInternalClient, type CascadeTarget, createOutboundClient, createRedis, CredentialStore, logRedisErrors, type Logger } from '@collab/shared';
import { openServiceStores } from '@collab/shared/storage';
import { createWebhooksApp } from './app.js';
import type { WebhooksConfig } from './config.js';
import { createWebhooksDataSource } from './data-source.js';
import { webhooksPurge } from './domain/cascade/cascade.js';
import type { WebhooksContext } from './domain/context.js';
import { internalRoutes } from './http/internal.routes.js';

/** Application secrets and webhook settings from identity, cached and invalidated as identity publishes changes. */
export async function followApplications(config: WebhooksConfig, logger: Logger) {
  const identity = createInternalClient({ baseUrl: config.IDENTITY_URL, internalToken: config.INTERNAL_TOKEN, service: 'identity', timeoutMs: 3000 });
  const applications = new CredentialStore(identity, config.CREDENTIALS_CACHE_TTL_MS);
  const subscriber = logRedisErrors(createRedis(config.REDIS_URL), logger);
  await applications.subscribe(subscriber, config.REDIS_PREFIX, logger);
  return { applications, close: () => subscriber.disconnect() };
}

/**
 * The cascade, after dropping a deleted application's cached credentials: an event recorded from
 * then on finds the application unknown even once its purge finished (admitsEvents).
 */
function forgetting(ctx: WebhooksContext, cascade: (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>) {
  return async (applicationId: string, target: CascadeTarget, requestId: string) => {
    if (target.kind === 'application') ctx.applications.invalidate({ kind: 'application', id: applicationId });
    await cascade(applicationId, target, requestId);
  };
}

export async function createWebhooksService(config: WebhooksConfig, logger: Logger, isDraining?: () => boolean) {
  const stores = await openServiceStores({ dataSource: createWebhooksDataSource(config.DATABASE_URL, config.DB_POOL_SIZE), config, logger });
  const following = await followApplications(config, logger);
  const ctx: WebhooksContext = {
    db: stores.db,
    logger,
    applications: following.applications,
    deliveryQueue: stores.producer('webhooks-delivery'),
    outbound: createOutboundClient({ allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS }),
  };
  const app = createWebhooksApp(ctx, { logger, internalToken: config.INTERNAL_TOKEN, isDraining, readiness: stores.readiness, internal: internalRoutes(ctx, forgetting(ctx, stores.receiveCascade(webhooksPurge, 'webhooks-purge'))),
  });
  return {
    app,
    ctx,
    async close() {
      following.close();
      await stores.close();
    },
  };
}
