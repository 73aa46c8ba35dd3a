/** The conversation service's dependencies and app, wired once for the API process and for tests. */
import {
  createInternalClient,
  createOutboundClient,
  createRedis,
  ApplicationVersions,
  logRedisErrors,
  reusingIdentityDirectory,
  reusingWebhookTargets,
  webhookTargets,
  type Logger,
  type RedisClient,
} from '@collab/shared';
import { openServiceStores } from '@collab/shared/storage';
import { createConversationApp } from './app.js';
import type { ConversationConfig, ConversationWorkerConfig } from './config.js';
import { createConversationDataSource } from './data-source.js';
import type { ConversationContext } from './domain/context.js';
import { identityDirectory } from './domain/identity-directory.js';
import { AppendBatches } from './domain/messages/append-batches.js';
import { conversationPurge } from './domain/cascade/cascade.js';
import { eventsProcessor } from './domain/events/relay.js';
import { internalRoutes } from './http/internal.routes.js';
import { linkPreviewQueue } from './domain/link-previews/link-previews.js';
import { createPageCache, fetchPage } from './domain/link-previews/pages.js';
import { linkPreviewJobs } from './jobs/link-previews.jobs.js';
import type { DataSource } from 'typeorm';

/**
 * What the use cases need, for the API process and the worker alike. The worker's events relay
 * queues the link-preview jobs through it; the API's queues none, so its preview queue never
 * connects (edits only ask whether previews are on). Identity's answers are reused while the
 * application's directory version, read over `redis`, is unchanged.
 */
export function conversationContext(db: DataSource, config: ConversationConfig, logger: Logger, redis: RedisClient): ConversationContext {
  const identity = identityDirectory(
    createInternalClient({ baseUrl: config.IDENTITY_URL, internalToken: config.INTERNAL_TOKEN, service: 'identity', timeoutMs: 3000 }),
  );
  const versions = new ApplicationVersions(redis, config.REDIS_PREFIX);
  return {
    db,
    logger,
    versions,
    identity: reusingIdentityDirectory(identity, versions, logger),
    files: { urlSecret: config.FILE_URL_SECRET, maxBytes: config.MAX_FILE_BYTES, publicUrl: config.PUBLIC_URL },
    linkPreviews: linkPreviewQueue({ enabled: config.LINK_PREVIEWS, connection: { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX } }),
    appends: new AppendBatches(),
  };
}

/** The link-preview job's handlers (run by the worker), and what closes the connection they hold. */
export function conversationLinkPreviews(db: DataSource, config: ConversationWorkerConfig, logger: Logger) {
  const redis = logRedisErrors(createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 }), logger);
  const outbound = createOutboundClient({ allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS });
  const pages = createPageCache({
    redis,
    prefix: config.REDIS_PREFIX,
    fetch: (url) => fetchPage(outbound, url),
    ttlSeconds: config.LINK_PREVIEW_CACHE_SECONDS,
    failureTtlSeconds: config.LINK_PREVIEW_FAILURE_CACHE_SECONDS,
  });
  return { handlers: linkPreviewJobs({ db, pages }), close: () => redis.disconnect() };
}

/** The relay of recorded entries into the notification and webhooks services (run by the worker). */
export function conversationEvents(ctx: ConversationContext, config: ConversationWorkerConfig, logger: Logger) {
  const client = (service: string, baseUrl: string) =>
    createInternalClient({ baseUrl, internalToken: config.INTERNAL_TOKEN, service, timeoutMs: 10_000 });
  const webhooks = client('webhooks', config.WEBHOOKS_URL);
  return eventsProcessor(
    ctx,
    { webhooks, targets: reusingWebhookTargets(webhookTargets(webhooks), ctx.versions, logger), notification: client('notification', config.NOTIFICATION_URL) },
    logger,
  );
}

export async function createConversationService(config: ConversationConfig, logger: Logger, isDraining?: () => boolean) {
  const stores = await openServiceStores({ dataSource: createConversationDataSource(config.DATABASE_URL, config.DB_POOL_SIZE), config, logger });
  const ctx = conversationContext(stores.db, config, logger, stores.redis);
  const internal = internalRoutes(ctx, stores.receiveCascade(conversationPurge, 'conversation-purge'));
  const idempotency = stores.idempotencyKeys({ ttlHours: config.IDEMPOTENCY_TTL_HOURS });
  const app = createConversationApp(ctx, { logger, internalToken: config.INTERNAL_TOKEN, isDraining, readiness: stores.readiness, internal, idempotency });
  return {
    app,
    ctx,
    async close() {
      await ctx.linkPreviews.close();
      await stores.close();
    },
  };
}
