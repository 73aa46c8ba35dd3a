/** Builds the notification service's Express app; never listens, so tests mount it directly. */
import { createServiceApp, routesOf, type Logger, type ReadinessCheck } from '@collab/shared';

export function createNotificationApp(options: {
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
  isDraining?: () => boolean;
}) {
  return createServiceApp({
    service: 'notification',
    logger: options.logger,
    internalToken: options.internalToken,
    routes: routesOf('notification'),
    handlers: {},
    readiness: options.readiness,
    isDraining: options.isDraining,
  });
}
