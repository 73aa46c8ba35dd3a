/** Identity's dependencies and app, wired once for the API process and for tests. */
import { storageReadiness, type Logger } from '@collab/shared';
import { createIdentityApp } from './app.js';
import type { IdentityConfig } from './config.js';
import { createIdentityContext } from './context.js';

export async function createIdentityService(config: IdentityConfig, logger: Logger, isDraining?: () => boolean) {
  const { ctx, redis, close } = await createIdentityContext(config, logger);
  const app = createIdentityApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    isDraining,
    readiness: storageReadiness(ctx.db, redis),
  });
  return { app, ctx, close };
}
