/** /v1/applications and its /v1/projects alias; customer tokens only. */
import { customerOf, identityRoutes as routes, routeBody, routeParams, type HandlerMap } from '@collab/shared';
import * as applications from '../../domain/applications/applications.js';
import type { IdentityContext } from '../../domain/context.js';

export function applicationHandlers(ctx: IdentityContext): HandlerMap {
  const handlers: HandlerMap = {};
  for (const prefix of ['application', 'project'] as const) {
    const create = routes[`${prefix}Create`];
    const list = routes[`${prefix}List`];
    const get = routes[`${prefix}Get`];
    const update = routes[`${prefix}Update`];
    const remove = routes[`${prefix}Delete`];
    const rotateSecret = routes[`${prefix}RotateSecret`];

    handlers[create.id] = async (req) => {
      const body = routeBody(create, req);
      const created = ({ id, secret }: { id: string; secret: string }) => ({
        success: true,
        message: 'Application created',
        applicationID: id,
        secret,
      });
      const application = await applications.createApplication(ctx, customerOf(req), body, (tx, written) =>
        req.idempotency.record(tx, { status: 200, body: created(written) }),
      );
      return created(application);
    };

    handlers[list.id] = (req) => applications.listApplications(ctx, customerOf(req));

    handlers[get.id] = (req) => {
      const { applicationID } = routeParams(get, req);
      return applications.getApplication(ctx, customerOf(req), applicationID);
    };

    handlers[update.id] = async (req) => {
      // Order of checks: the id, the application, then the body.
      const { applicationID } = routeParams(update, req);
      await applications.assertApplicationExists(ctx, customerOf(req), applicationID);
      const body = routeBody(update, req);
      await applications.updateApplication(ctx, customerOf(req), applicationID, body);
      return { success: true, message: `You successfully updated application ${applicationID}` };
    };

    handlers[remove.id] = async (req) => {
      // The secret is validated before the id.
      const { secret } = routeBody(remove, req);
      const { applicationID } = routeParams(remove, req);
      await applications.deleteApplication(ctx, customerOf(req), applicationID, secret, req.ctx.requestId);
      return { success: true, message: `You successfully deleted application ${applicationID}` };
    };

    handlers[rotateSecret.id] = async (req) => {
      const { applicationID } = routeParams(rotateSecret, req);
      const rotated = await applications.rotateApplicationSecret(ctx, customerOf(req), applicationID);
      return {
        success: true,
        message: `You successfully rotated the secret of application ${applicationID}`,
        applicationID: rotated.id,
        secret: rotated.secret,
        // Until when server tokens signed with the previous secret still work (null: they no longer do).
        previousSecretExpires: rotated.previousSecretExpiresAt?.toISOString() ?? null,
      };
    };
  }
  return handlers;
}
