/** /v1/users handlers, both generations on one path. */
import { ApiError, applicationOf, identityRoutes as routes, routeBody, routeParams, routeQuery, type HandlerMap, type ServiceRequest } from '@collab/shared';
import type { IdentityContext } from '../../domain/context.js';
import * as users from '../../domain/users/users.js';

/** A request is earlier-generation by header, or (PUT user) by a snake_case-only key in its body. */
function isEarlierGeneration(req: ServiceRequest, body?: object): boolean {
  if (String(req.headers['x-api-generation'] ?? '').toLowerCase() === 'earlier') return true;
  return body !== undefined && users.EARLIER_GENERATION_KEYS.some((key) => key in body);
}

export function userHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.createUser.id]: async (req, res) => {
      const { id, ...fields } = routeBody(routes.createUser, req);
      await users.createUser(ctx, applicationOf(req), id, fields);
      res.statusCode = 201;
      return { success: true, message: `You successfully created user ${id}` };
    },

    [routes.upsertUser.id]: async (req) => {
      const { userID } = routeParams(routes.upsertUser, req);
      const body = routeBody(routes.upsertUser, req);
      const earlierGeneration = isEarlierGeneration(req, body);
      const outcome = await users.upsertUser(ctx, applicationOf(req), userID, body, { earlierGeneration });
      return earlierGeneration ? { success: true } : { success: true, message: `You successfully ${outcome} user ${userID}` };
    },

    [routes.listUsers.id]: (req) => {
      const { limit, token, filter, search } = routeQuery(routes.listUsers, req);
      if (isEarlierGeneration(req)) return users.listAllUsersLegacy(ctx, applicationOf(req));
      return users.listUsers(ctx, applicationOf(req), { limit, token, metadata: filter.metadata, search });
    },

    [routes.getUser.id]: (req) => {
      const { userID } = routeParams(routes.getUser, req);
      return users.getUser(ctx, applicationOf(req), userID);
    },

    [routes.deleteUser.id]: async (req) => {
      // The body is checked before the path.
      const { permanently_delete } = routeBody(routes.deleteUser, req);
      if (!permanently_delete)
        throw new ApiError('invalid_request', 'The user is deleted only when permanently_delete is true.');
      const { userID } = routeParams(routes.deleteUser, req);
      const failed = await users.deleteUser(ctx, applicationOf(req), userID, req.ctx.requestId);
      return { success: true, message: 'User deleted.', userID, failedDeletionIDs: failed, failedDeletionFileIDs: failed };
    },
  };
}
