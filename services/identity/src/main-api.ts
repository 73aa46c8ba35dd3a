/** Identity HTTP API: users, groups, organizations, applications, customers, access tokens. */
import { createLogger, processMetrics, ProcessLifecycle, runMain, serveMetrics } from '@collab/shared';
import { loadIdentityConfig } from './config.js';
import { ensureBootCustomer } from './domain/customers/customers.js';
import { createIdentityService } from './service.js';

runMain('identity', async () => {
  const config = loadIdentityConfig();
  const logger = createLogger('identity', config.LOG_LEVEL);
  const lifecycle = new ProcessLifecycle(logger);
  const { app, ctx, close } = await createIdentityService(config, logger, lifecycle.isDraining);
  lifecycle.onShutdown(close);
  processMetrics().watchPool('identity', ctx.db);
  await serveMetrics(lifecycle, config.METRICS_PORT, logger);

  const created = await ensureBootCustomer(
    ctx,
    config.CUSTOMER_ID ? { id: config.CUSTOMER_ID, secret: config.CUSTOMER_SECRET } : null,
  );
  if (created) {
    // Printed once, on the console rather than the log, so that the operator can copy it.
    console.log(
      `\nCreated the first customer. Keep these to mint application-management tokens:\n` +
        `  CUSTOMER_ID=${created.id}\n  CUSTOMER_SECRET=${created.secret}\n`,
    );
  }

  await lifecycle.listen(app, config.PORT);
  lifecycle.installSignalHandlers();
  logger.info({ port: config.PORT }, 'identity listening');
});
