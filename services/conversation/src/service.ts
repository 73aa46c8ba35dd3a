/** The conversation service's dependencies and app, wired once for the API process and for tests. */
import { createRedis, hasPendingMigrations, type Logger } from '@collab/shared';
import { createConversationApp } from './app.js';
import type { ConversationConfig } from './config.js';
import { createConversationDataSource } from './data-source.js';

export async function createConversationService(config: ConversationConfig, logger: Logger, isDraining?: () => boolean) {
  const db = createConversationDataSource(config.DATABASE_URL, config.DB_POOL_SIZE);
  await db.initialize();
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  redis.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const app = createConversationApp({
    logger,
    internalToken: config.INTERNAL_TOKEN,
    isDraining,
    readiness: [
      { name: 'postgres', check: () => db.query('SELECT 1') },
      { name: 'redis', check: () => redis.ping() },
      {
        name: 'migrations',
        check: async () => {
          if (await hasPendingMigrations(db)) throw new Error('migrations pending');
        },
      },
    ],
  });
  return {
    app,
    async close() {
      redis.disconnect();
      await db.destroy();
    },
  };
}
