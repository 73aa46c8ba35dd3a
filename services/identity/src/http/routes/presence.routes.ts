/** Presence handlers: set a user's presence, read it back with a server token or a client token. */
import { applicationOf, presenceRoutes as routes, routeBody, routeParams, routeQuery, viewerOf, type HandlerMap } from '@collab/shared';
import type { IdentityContext } from '../../domain/context.js';
import * as presence from '../../domain/presence/presence.js';

export function presenceHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.updatePresence.id]: async (req) => {
      // §1.2: the path is checked before the body.
      const { userID } = routeParams(routes.updatePresence, req);
      const body = routeBody(routes.updatePresence, req);
      await presence.updatePresence(ctx, applicationOf(req), userID, body);
      return { success: true, message: `You successfully updated user ${userID} presence` };
    },

    [routes.getUserPresence.id]: (req) => {
      const { userID } = routeParams(routes.getUserPresence, req);
      const query = routeQuery(routes.getUserPresence, req);
      return presence.getUserPresence(ctx, applicationOf(req), userID, {
        location: query.location,
        partialMatch: query.partial_match === 'true',
        excludeDurable: query.exclude_durable === 'true',
      });
    },

    [routes.clientPresence.id]: (req) => {
      const query = routeQuery(routes.clientPresence, req);
      return presence.getClientPresence(ctx, applicationOf(req), viewerOf(req), {
        location: query.location,
        partialMatch: query.partial_match === 'true',
        excludeDurable: query.exclude_durable === 'true',
      });
    },
  };
}
