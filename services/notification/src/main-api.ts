/** Notification HTTP API. Its public routes arrive with the notification issue; today it answers health checks. */
import { createLogger, ProcessLifecycle, runMain } from '@collab/shared';
import { loadNotificationConfig } from './config.js';
import { createNotificationService } from './service.js';

runMain('notification', async () => {
  const config = loadNotificationConfig();
  const logger = createLogger('notification', config.LOG_LEVEL);
  const lifecycle = new ProcessLifecycle(logger);
  const { app, close } = await createNotificationService(config, logger, lifecycle.isDraining);
  lifecycle.onShutdown(close);
  await lifecycle.listen(app, config.PORT);
  lifecycle.installSignalHandlers();
  logger.info({ port: config.PORT }, 'notification listening');
});
