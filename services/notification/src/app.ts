/** Builds the notification service's Express app; never listens, so tests mount it directly. */
import { createServiceApp, routesOf, type IdempotencyStore, type Logger, type ReadinessCheck } from '@collab/shared';
import type { Router } from 'express';
import type { NotificationContext } from './domain/notifications/notifications.js';
import { notificationHandlers } from './http/routes/notifications.routes.js';

export function createNotificationApp(
  ctx: NotificationContext,
  options: {
    logger: Logger;
    internalToken: string;
    internal: Router;
    readiness: ReadinessCheck[];
    isDraining?: () => boolean;
    idempotency: IdempotencyStore;
  },
) {
  return createServiceApp({
    service: 'notification',
    logger: options.logger,
    internalToken: options.internalToken,
    routes: routesOf('notification'),
    handlers: notificationHandlers(ctx),
    internal: options.internal,
    readiness: options.readiness,
    isDraining: options.isDraining,
    idempotency: options.idempotency,
  });
}
