/** Conversation HTTP API. Its public routes arrive with the conversation issue; today it answers health checks. */
import { createLogger, processMetrics, ProcessLifecycle, runMain, serveMetrics } from '@collab/shared';
import { loadConversationConfig } from './config.js';
import { createConversationService } from './service.js';

runMain('conversation', async () => {
  const config = loadConversationConfig();
  const logger = createLogger('conversation', config.LOG_LEVEL);
  const lifecycle = new ProcessLifecycle(logger);
  const { app, ctx, close } = await createConversationService(config, logger, lifecycle.isDraining);
  lifecycle.onShutdown(close);
  processMetrics().watchPool('conversation', ctx.db);
  await serveMetrics(lifecycle, config.METRICS_PORT, logger);
  await lifecycle.listen(app, config.PORT);
  lifecycle.installSignalHandlers();
  logger.info({ port: config.PORT }, 'conversation listening');
});
