/** Wires identity's dependencies (database, Redis, deletion outbox, outbound calls) for the API process and the CLIs. */
import { createOutboundClient, createRedis, invalidationChannel, SecretBox, type Logger } from '@collab/shared';
import type { IdentityConfig } from './config.js';
import { createIdentityDataSource } from './data-source.js';
import { deletionProcessor } from './domain/cascade/deletion-cascade.js';
import type { IdentityContext } from './domain/context.js';

/** Everything but the batch settings, which only the API process uses (service.ts). */
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
