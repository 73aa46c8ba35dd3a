/** /v1/applications/<ID>/webhooks (and /v1/projects/…) and /v1/webhooks/deliveries handlers. */
import {
  applicationOf,
  routeBody,
  routeParams,
  routeQuery,
  webhookRegistrationRoutes,
  webhooksRoutes as routes,
  type HandlerMap,
} from '@collab/shared';
import type { WebhooksContext } from '../../domain/context.js';
import { getDelivery, listDeliveries, listDeliveryAttempts, retryDelivery } from '../../domain/deliveries/deliveries.js';
import { deleteWebhook, listWebhooks, registerWebhook } from '../../domain/registrations/registrations.js';

export function webhooksHandlers(ctx: WebhooksContext): HandlerMap {
  const registrationHandlers = ({ create, list, delete: remove }: (typeof webhookRegistrationRoutes)[number]): HandlerMap => {
    return {
      [create.id]: async (req, res) => {
        const webhookID = await registerWebhook(ctx, applicationOf(req), routeBody(create, req));
        // 201 on create and on update alike: integrations written for that answer expect it.
        res.statusCode = 201;
        return { success: true, message: `Successfully created webhook with id: ${webhookID}`, webhookID };
      },
      [list.id]: (req) => listWebhooks(ctx.db, applicationOf(req)),
      [remove.id]: async (req) => {
        const { webhookID } = routeParams(remove, req);
        await deleteWebhook(ctx.db, applicationOf(req), webhookID);
        return { success: true, message: `You have successfully deleted webhook: ${webhookID}`, deleted: webhookID };
      },
    };
  };
  return {
    ...Object.assign({}, ...webhookRegistrationRoutes.map(registrationHandlers)),
    [routes.listDeliveries.id]: (req) => listDeliveries(ctx, applicationOf(req), routeQuery(routes.listDeliveries, req)),
    [routes.getDelivery.id]: (req) => getDelivery(ctx, applicationOf(req), routeParams(routes.getDelivery, req).deliveryID),
    [routes.listDeliveryAttempts.id]: (req) =>
      listDeliveryAttempts(
        ctx,
        applicationOf(req),
        routeParams(routes.listDeliveryAttempts, req).deliveryID,
        routeQuery(routes.listDeliveryAttempts, req).limit,
      ),
    [routes.retryDelivery.id]: async (req) => {
      const { deliveryID } = routeParams(routes.retryDelivery, req);
      await retryDelivery(ctx, applicationOf(req), deliveryID, req.ctx.requestId);
      return { success: true, message: `Delivery ${deliveryID} queued.` };
    },
  };
}
