/** Identity's dependencies and app, wired once for the API process and for tests. */
import { createInternalClient, createProducer, exportClient, type Logger } from '@collab/shared';
import { createIdempotencyStore, storageReadiness } from '@collab/shared/storage';
import { createIdentityApp } from './app.js';
import type { IdentityConfig } from './config.js';
import { createIdentityContext } from './context.js';
import { IDENTITY_SCHEMA } from './entities/index.js';

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
