/** The conversation service's dependencies and app, wired once for the API process and for tests. */
import { createInternalClient, createProducer, createRedis, type Logger } from '@collab/shared';
import { storageReadiness } from '@collab/shared/storage';
import { createConversationApp } from './app.js';
import type { ConversationConfig, ConversationWorkerConfig } from './config.js';
import { createConversationDataSource } from './data-source.js';
import type { ConversationContext } from './domain/context.js';
import { identityDirectory } from './domain/identity-directory.js';
import { applyCascade } from './domain/cascade/cascade.js';
import { eventsProcessor } from './domain/events/relay.js';
import { internalRouter } from './http/internal.router.js';
import type { DataSource } from 'typeorm';

/** What the use cases need, for the API process and the worker alike. */
export function conversationContext(db: DataSource, config: ConversationConfig, logger: Logger): ConversationContext {
  const identityClient = createInternalClient({
    baseUrl: config.IDENTITY_URL,
    internalToken: config.INTERNAL_TOKEN,
    service: 'identity',
    timeoutMs: 3000,
  });
  return {
    db,
    logger,
    identity: identityDirectory(identityClient),
    files: { urlSecret: config.FILE_URL_SECRET, maxBytes: config.MAX_FILE_BYTES, publicUrl: config.PUBLIC_URL },
  };
}

/** The relay of recorded entries into the notification and webhooks services (run by the worker). */
export function conversationEvents(ctx: ConversationContext, config: ConversationWorkerConfig, logger: Logger) {
  const client = (service: string, baseUrl: string) =>
    createInternalClient({ baseUrl, internalToken: config.INTERNAL_TOKEN, service, timeoutMs: 10_000 });
  return eventsProcessor(ctx, { webhooks: client('webhooks', config.WEBHOOKS_URL), notification: client('notification', config.NOTIFICATION_URL) }, logger);
}

export async function createConversationService(config: ConversationConfig, logger: Logger, isDraining?: () => boolean) {
  const db = createConversationDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
  await db.initialize();
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const ctx = conversationContext(db, config, logger);
  const purgeQueue = createProducer('conversation-purge', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
  const app = createConversationApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    internal: internalRouter(ctx, (applicationId, target, requestId) => applyCascade({ db, purgeQueue }, applicationId, target, requestId)),
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
