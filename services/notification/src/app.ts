/** Builds the notification service's request handler; never listens, so tests serve it themselves. */
import { createServiceApp, routesOf, type ServiceAppWiring } from '@collab/shared';
import type { NotificationContext } from './domain/context.js';
import { notificationHandlers } from './http/routes/notifications.routes.js';

export function createNotificationApp(ctx: NotificationContext, wiring: ServiceAppWiring) {
  return createServiceApp({ ...wiring, service: 'notification', routes: routesOf('notification'), handlers: notificationHandlers(ctx) });
}
