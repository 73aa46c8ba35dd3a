/** /v1/notifications and /v1/users/<ID>/notifications handlers. */
import {
  applicationOf,
  clientNotificationRoutes,
  notificationRoutes as routes,
  requestBaseUrl,
  routeBody,
  routeParams,
  routeQuery,
  viewerOf,
  type HandlerMap,
} from '@collab/shared';
import type { NotificationContext } from '../../domain/context.js';
import * as notifications from '../../domain/notifications/notifications.js';

export function notificationHandlers(ctx: NotificationContext): HandlerMap {
  return {
    [routes.createNotification.id]: async (req) => {
      const body = routeBody(routes.createNotification, req);
      const created = (notificationID: string) => ({ success: true, message: 'Notification created.', notificationID });
      const notificationID = await notifications.createNotification(ctx, applicationOf(req), body, {
        requestId: req.ctx.requestId,
        linkBase: requestBaseUrl(req),
        recordWrite: (tx, id) => req.idempotency.record(tx, { status: 200, body: created(id) }),
      });
      return created(notificationID);
    },

    [routes.listUserNotifications.id]: (req) => {
      const { userID } = routeParams(routes.listUserNotifications, req);
      const page = routeQuery(routes.listUserNotifications, req);
      return notifications.listNotifications(ctx, applicationOf(req), userID, page, requestBaseUrl(req), req.ctx.requestId);
    },

    [routes.deleteNotification.id]: async (req) => {
      const { notificationID } = routeParams(routes.deleteNotification, req);
      await notifications.deleteNotification(ctx, applicationOf(req), notificationID);
      return { success: true, message: `You successfully deleted notification ${notificationID}` };
    },

    [clientNotificationRoutes.clientNotifications.id]: (req) =>
      notifications.clientNotifications(ctx, applicationOf(req), viewerOf(req), requestBaseUrl(req), req.ctx.requestId),

    [clientNotificationRoutes.clientNotificationCounts.id]: (req) =>
      notifications.clientNotificationCounts(ctx, applicationOf(req), viewerOf(req), req.ctx.requestId),
  };
}
