/** /v1/users/<ID>/preferences handlers. */
import { applicationOf, preferencesRoutes as routes, routeBody, routeParams, type HandlerMap } from '@collab/shared';
import type { IdentityContext } from '../../domain/context.js';
import * as preferences from '../../domain/preferences/preferences.js';

export function preferencesHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.getPreferences.id]: (req) => {
      const { userID } = routeParams(routes.getPreferences, req);
      return preferences.getPreferences(ctx, applicationOf(req), userID);
    },

    [routes.updatePreferences.id]: async (req) => {
      const body = routeBody(routes.updatePreferences, req);
      const { userID } = routeParams(routes.updatePreferences, req);
      await preferences.updatePreferences(ctx, applicationOf(req), userID, body);
      return { success: true, message: `You successfully updated user ${userID} preferences` };
    },
  };
}
