/** Identity's dependencies and app, wired once for the API process and for tests. */
import { hasPendingMigrations, type Logger } from '@collab/shared';
import { createIdentityApp } from './app.js';
import type { IdentityConfig } from './config.js';
import { createIdentityContext } from './context.js';

export async function createIdentityService(config: IdentityConfig, logger: Logger, isDraining?: () => boolean) {
  const { ctx, redis, close } = await createIdentityContext(config, logger);
  const app = createIdentityApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    isDraining,
    readiness: [
      { name: 'postgres', check: () => ctx.db.query('SELECT 1') },
      { name: 'redis', check: () => redis.ping() },
      {
        name: 'migrations',
        check: async () => {
          if (await hasPendingMigrations(ctx.db)) throw new Error('migrations pending');
        },
      },
    ],
  });
  return { app, ctx, close };
}
