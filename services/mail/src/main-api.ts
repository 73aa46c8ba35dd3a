/** Mail HTTP API: records the mails notifications cause (internal) and serves the links in them. */
import { createLogger, processMetrics, ProcessLifecycle, runMain, serveMetrics } from '@collab/shared';
import { loadMailConfig } from './config.js';
import { createMailService } from './service.js';

runMain('mail', async () => {
  const config = loadMailConfig();
  const logger = createLogger('mail', config.LOG_LEVEL);
  const lifecycle = new ProcessLifecycle(logger);
  const { app, ctx, close } = await createMailService(config, logger, lifecycle.isDraining);
  lifecycle.onShutdown(close);
  processMetrics().watchPool('mail', ctx.db);
  await serveMetrics(lifecycle, config.METRICS_PORT, logger);
  await lifecycle.listen(app, config.PORT);
  lifecycle.installSignalHandlers();
  logger.info({ port: config.PORT }, 'mail listening');
});
