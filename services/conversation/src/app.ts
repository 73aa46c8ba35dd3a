/** Builds the conversation service's Express app; never listens, so tests mount it directly. */
import { createServiceApp, routesOf, type Logger, type ReadinessCheck } from '@collab/shared';

export function createConversationApp(options: {
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
  isDraining?: () => boolean;
}) {
  return createServiceApp({
    service: 'conversation',
    logger: options.logger,
    internalToken: options.internalToken,
    routes: routesOf('conversation'),
    handlers: {},
    readiness: options.readiness,
    isDraining: options.isDraining,
  });
}
