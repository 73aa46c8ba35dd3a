/** The webhooks service's dependencies and app, wired once for the API process and for tests. */
import {
  createInternalClient,
  type CascadeTarget,
  createOutboundClient,
  createRedis,
  CredentialStore,
  logRedisErrors,
  type InvalidationMessage,
  type Logger,
} from '@collab/shared';
import { openServiceStores } from '@collab/shared/storage';
import { createWebhooksApp } from './app.js';
import type { WebhooksConfig } from './config.js';
import { createWebhooksDataSource } from './data-source.js';
import { webhooksPurge } from './domain/cascade/cascade.js';
import type { WebhooksContext } from './domain/context.js';
import { targetsVersion } from './domain/events/targets-version.js';
import { internalRoutes } from './http/internal.routes.js';

/**
 * Application secrets and webhook settings from identity, cached and invalidated as identity
 * publishes changes; `onInvalidated` runs after each invalidation is applied.
 */
export async function followApplications(config: WebhooksConfig, logger: Logger, onInvalidated?: (message: InvalidationMessage) => void) {
  const identity = createInternalClient({ baseUrl: config.IDENTITY_URL, internalToken: config.INTERNAL_TOKEN, service: 'identity', timeoutMs: 3000 });
  const applications = new CredentialStore(identity, config.CREDENTIALS_CACHE_TTL_MS);
  const subscriber = logRedisErrors(createRedis(config.REDIS_URL), logger);
  await applications.subscribe(subscriber, config.REDIS_PREFIX, logger, onInvalidated);
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
  const targetsChanged = targetsVersion(stores.redis, config.REDIS_PREFIX, logger);
  // An application's event URL and subscriptions are identity's: their change changes the targets.
  const following = await followApplications(config, logger, (message) => {
    if (message.kind === 'application') void targetsChanged(message.id);
  });
  const ctx: WebhooksContext = {
    db: stores.db,
    logger,
    applications: following.applications,
    deliveryQueue: stores.producer('webhooks-delivery'),
    targetsChanged,
    outbound: createOutboundClient({ allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS }),
  };
  const app = createWebhooksApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    isDraining,
    readiness: stores.readiness,
    internal: internalRoutes(ctx, forgetting(ctx, stores.receiveCascade(webhooksPurge, 'webhooks-purge'))),
    // Every write may change where an application's events go (a delivery retry too, for
    // simplicity: a relay then asks once more).
    afterWrite: async ({ applicationId }) => {
      if (applicationId) await targetsChanged(applicationId);
    },
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
