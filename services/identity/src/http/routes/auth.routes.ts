/** POST /v1/authorize and GET /v1/verify. */
import { applicationOf, identityRoutes as routes, routeBody, type HandlerMap } from '@collab/shared';
import * as auth from '../../domain/auth/auth.js';
import type { IdentityContext } from '../../domain/context.js';

export function authHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.authorize.id]: (req) => auth.authorize(ctx, routeBody(routes.authorize, req).signed_app_token),
    [routes.verify.id]: (req) => auth.verifyApplication(ctx, applicationOf(req)),
  };
}
