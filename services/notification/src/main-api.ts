/** Notification HTTP API: send notifications, list a user's, delete one. */
import { createLogger, processMetrics, ProcessLifecycle, runMain, serveMetrics } from '@collab/shared';
import { loadNotificationConfig } from './config.js';
import { createNotificationService } from './service.js';

runMain('notification', async () => {
  const config = loadNotificationConfig();
  const logger = createLogger('notification', config.LOG_LEVEL);
  const lifecycle = new ProcessLifecycle(logger);
  const { app, ctx, close } = await createNotificationService(config, logger, lifecycle.isDraining);
  lifecycle.onShutdown(close);
  processMetrics().watchPool('notification', ctx.db);
  await serveMetrics(lifecycle, config.METRICS_PORT, logger);
  await lifecycle.listen(app, config.PORT);
  lifecycle.installSignalHandlers();
  logger.info({ port: config.PORT }, 'notification listening');
});
