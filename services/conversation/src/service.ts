/** The conversation service's dependencies and app, wired once for the API process and for tests. */
import { cascadeRouter, createInternalClient, createProducer, createRedis, type Logger } from '@collab/shared';
import { storageReadiness } from '@collab/shared/storage';
import { createConversationApp } from './app.js';
import type { ConversationConfig } from './config.js';
import { createConversationDataSource } from './data-source.js';
import type { ConversationContext } from './domain/context.js';
import { identityDirectory } from './domain/identity-directory.js';
import { applyCascade } from './domain/cascade/cascade.js';

export async function createConversationService(config: ConversationConfig, logger: Logger, isDraining?: () => boolean) {
  const db = createConversationDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
  await db.initialize();
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const identityClient = createInternalClient({
    baseUrl: config.IDENTITY_URL,
    internalToken: config.INTERNAL_TOKEN,
    service: 'identity',
    timeoutMs: 3000,
  });
  const ctx: ConversationContext = {
    db,
    logger,
    identity: identityDirectory(identityClient),
    files: { urlSecret: config.FILE_URL_SECRET, maxBytes: config.MAX_FILE_BYTES, publicUrl: config.PUBLIC_URL },
  };
  const purgeQueue = createProducer('conversation-purge', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const app = createConversationApp(ctx, {
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
