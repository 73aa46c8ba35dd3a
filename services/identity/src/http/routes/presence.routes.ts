/** Presence handlers: parse, call one use case, shape the response. */
import { applicationOf, presenceRoutes as routes, routeBody, routeParams, routeQuery, type HandlerMap } from '@collab/shared';
import type { IdentityContext } from '../../domain/context.js';
import * as presence from '../../domain/presence/presence.js';

export function presenceHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.updatePresence.id]: async (req) => {
      const { userID } = routeParams(routes.updatePresence, req);
      await presence.updatePresence(ctx, applicationOf(req), userID, routeBody(routes.updatePresence, req));
      return { success: true, message: `You successfully updated user ${userID} presence` };
    },

    [routes.getPresence.id]: (req) => {
      const { userID } = routeParams(routes.getPresence, req);
      const query = routeQuery(routes.getPresence, req);
      return presence.getUserPresence(ctx, applicationOf(req), userID, {
        location: query.location,
        partial: query.partial_match,
        excludeDurable: query.exclude_durable,
      });
    },
  };
}
