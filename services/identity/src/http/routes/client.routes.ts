/** Client-token reads of users (presence is in presence.routes.ts). */
import { applicationOf, clientRoutes as routes, routeParams, routeQuery, viewerOf, type HandlerMap } from '@collab/shared';
import * as client from '../../domain/client/client-users.js';
import type { IdentityContext } from '../../domain/context.js';

export function clientHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.clientUser.id]: (req) => {
      const { userID } = routeParams(routes.clientUser, req);
      return client.getClientUser(ctx, applicationOf(req), viewerOf(req), userID);
    },
    [routes.clientUsers.id]: (req) => {
      const { users } = routeQuery(routes.clientUsers, req);
      return client.getClientUsers(ctx, applicationOf(req), viewerOf(req), users);
    },
    [routes.clientGroupMembers.id]: (req) => {
      const { groupID } = routeParams(routes.clientGroupMembers, req);
      return client.getClientGroupMembers(ctx, applicationOf(req), viewerOf(req), groupID);
    },
  };
}
