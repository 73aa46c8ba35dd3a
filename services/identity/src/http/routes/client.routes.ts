/** /v1/client/* handlers of identity: parse, call one use case as the token's viewer. */
import { applicationOf, clientIdentityRoutes as routes, routeParams, routeQuery, viewerOf, type HandlerMap } from '@collab/shared';
import * as client from '../../domain/client/client-reads.js';
import type { IdentityContext } from '../../domain/context.js';

/** The viewer the gateway verified; a client route never runs without one. */
export function clientHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.clientViewer.id]: (req) => client.viewer(ctx, applicationOf(req), viewerOf(req)),

    [routes.clientUser.id]: (req) => {
      const { userID } = routeParams(routes.clientUser, req);
      return client.user(ctx, applicationOf(req), viewerOf(req), userID);
    },

    [routes.clientUsers.id]: (req) => {
      const { users } = routeQuery(routes.clientUsers, req);
      return client.users(ctx, applicationOf(req), viewerOf(req), users);
    },

    [routes.clientGroupMembers.id]: (req) => {
      const { groupID } = routeParams(routes.clientGroupMembers, req);
      return client.groupMembers(ctx, applicationOf(req), viewerOf(req), groupID);
    },

    [routes.clientPresence.id]: (req) => {
      const query = routeQuery(routes.clientPresence, req);
      return client.presence(ctx, applicationOf(req), viewerOf(req), {
        location: query.location,
        partial: query.partial_match,
        excludeDurable: query.exclude_durable,
      });
    },
  };
}
