/** Identity's dependencies and app, wired once for the API process, the CLIs and tests. */
import {
  createInternalClient,
  createOutboundClient,
  createProducer,
  createRedis,
  exportClient,
  invalidationChannel,
  SecretBox,
  type Logger,
} from '@collab/shared';
import { createIdempotencyStore, storageReadiness } from '@collab/shared/storage';
import { createIdentityApp } from './app.js';
import type { IdentityConfig } from './config.js';
import { createIdentityDataSource } from './data-source.js';
import { deletionProcessor } from './domain/cascade/deletion-cascade.js';
import type { IdentityContext } from './domain/context.js';
import { IDENTITY_SCHEMA } from './entities/index.js';

/**
 * Identity's dependencies (database, Redis, deletion outbox, outbound calls) for the API process
 * and the CLIs: everything but the batch, metrics and idempotency settings, which only the API uses.
 */
export async function createIdentityContext(config: Omit<IdentityConfig, 'BATCH_WAIT_MS' | 'METRICS_PORT' | 'IDEMPOTENCY_TTL_HOURS'>, logger: Logger) {
  const db = createIdentityDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
  await db.initialize();
  // Few retries: a Redis outage must not stall requests; caches then expire by TTL instead.
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const channel = invalidationChannel(config.REDIS_PREFIX);
  const ctx: IdentityContext = {
    db,
    secretBox: new SecretBox(config.SECRETS_ENCRYPTION_KEY),
    logger,
    deletions: deletionProcessor(db, config, logger),
    accessTokenSecret: config.ACCESS_TOKEN_SECRET,
    secretRotationGraceHours: config.SECRET_ROTATION_GRACE_HOURS,
    outbound: createOutboundClient({ allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS }),
    async publishInvalidation(message) {
      try {
        await redis.publish(channel, JSON.stringify(message));
      } catch (error) {
        logger.warn({ err: (error as Error).message, message }, 'cache invalidation not published');
      }
    },
  };
  return {
    ctx,
    redis,
    async close() {
      redis.disconnect();
      await db.destroy();
    },
  };
}

export async function createIdentityService(config: IdentityConfig, logger: Logger, isDraining?: () => boolean) {
  const { ctx, redis, close } = await createIdentityContext(config, logger);
  const batchQueue = createProducer('identity-batch', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const importQueue = createProducer('identity-import', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const app = createIdentityApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    isDraining,
    readiness: storageReadiness(ctx.db, redis),
    batch: { db: ctx.db, logger, queue: batchQueue, waitMs: config.BATCH_WAIT_MS },
    imports: {
      db: ctx.db,
      queue: importQueue,
      secretBox: ctx.secretBox,
      // The export asks each service for its tables (GET /v1/customer/dbdump).
      services: exportClient({
        conversation: createInternalClient({ baseUrl: config.CONVERSATION_URL, internalToken: config.INTERNAL_TOKEN, service: 'conversation' }),
        notification: createInternalClient({ baseUrl: config.NOTIFICATION_URL, internalToken: config.INTERNAL_TOKEN, service: 'notification' }),
        webhooks: createInternalClient({ baseUrl: config.WEBHOOKS_URL, internalToken: config.INTERNAL_TOKEN, service: 'webhooks' }),
      }),
    },
    // Sealed: an application's creation answers its secret, which identity stores only encrypted.
    idempotency: createIdempotencyStore(ctx.db, { schema: IDENTITY_SCHEMA, ttlHours: config.IDEMPOTENCY_TTL_HOURS, seal: ctx.secretBox }),
  });
  return {
    app,
    ctx,
    async close() {
      await batchQueue.close();
      await importQueue.close();
      await close();
    },
  };
}
