/** The public entry point: verifies tokens and routes /v1 traffic to the owning service. */
import { createLogger, ProcessLifecycle, runMain, serveMetrics } from '@collab/shared';
import { loadGatewayConfig } from './config.js';
import { createGateway } from './gateway.js';

runMain('gateway', async () => {
  const config = loadGatewayConfig();
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const lifecycle = new ProcessLifecycle(logger);
  const { app, serverOptions, close } = await createGateway(config, logger, lifecycle.isDraining);
  lifecycle.onShutdown(close);
  await serveMetrics(lifecycle, config.METRICS_PORT, logger);
  await lifecycle.listen(app, config.PORT, serverOptions);
  lifecycle.installSignalHandlers();
  logger.info({ port: config.PORT }, 'gateway listening');
});
