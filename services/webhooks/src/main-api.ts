/** Webhooks HTTP API: registered webhooks, the delivery log, and the internal endpoint where events arrive. */
import { createLogger, processMetrics, ProcessLifecycle, runMain, serveMetrics } from '@collab/shared';
import { loadWebhooksConfig } from './config.js';
import { createWebhooksService } from './service.js';

runMain('webhooks', async () => {
  const config = loadWebhooksConfig();
  const logger = createLogger('webhooks', config.LOG_LEVEL);
  const lifecycle = new ProcessLifecycle(logger);
  const { app, ctx, close } = await createWebhooksService(config, logger, lifecycle.isDraining);
  lifecycle.onShutdown(close);
  processMetrics().watchPool('webhooks', ctx.db);
  await serveMetrics(lifecycle, config.METRICS_PORT, logger);
  await lifecycle.listen(app, config.PORT);
  lifecycle.installSignalHandlers();
  logger.info({ port: config.PORT }, 'webhooks listening');
});
