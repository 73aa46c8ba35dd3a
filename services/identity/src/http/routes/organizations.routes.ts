/**
 * /v1/organizations handlers: the earlier generation of groups. Same use cases as /v1/groups, with
 * the earlier generation's response shapes (members as earlier-generation users) and `401
 * organization_not_found` for an unknown organization.
 */
import { applicationOf, identityRoutes as routes, routeBody, routeParams, routeQuery, type HandlerMap } from '@collab/shared';
import type { IdentityContext } from '../../domain/context.js';
import * as groups from '../../domain/groups/groups.js';
import { organizationNotFound } from '../../domain/not-found.js';
import { legacyUser } from '../../domain/users/user-views.js';

export function organizationHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.createOrganization.id]: async (req, res) => {
      const { id, ...fields } = routeBody(routes.createOrganization, req);
      await groups.createGroup(ctx, applicationOf(req), id, fields);
      res.statusCode = 201;
      return { success: true, message: `You successfully created organization ${id}` };
    },

    [routes.upsertOrganization.id]: async (req) => {
      const { orgID } = routeParams(routes.upsertOrganization, req);
      const body = routeBody(routes.upsertOrganization, req);
      await groups.upsertGroup(ctx, applicationOf(req), orgID, body);
      return { success: true };
    },

    [routes.updateOrganizationMembers.id]: async (req) => {
      const { orgID } = routeParams(routes.updateOrganizationMembers, req);
      await groups.assertGroupExists(ctx, applicationOf(req), orgID, organizationNotFound);
      const body = routeBody(routes.updateOrganizationMembers, req);
      const group = await groups.updateGroupMembers(ctx, applicationOf(req), orgID, body, organizationNotFound);
      return (await groups.groupMembers(ctx, applicationOf(req), group)).map(legacyUser);
    },

    [routes.listOrganizations.id]: (req) => groups.listGroups(ctx, applicationOf(req)),

    [routes.getOrganization.id]: (req) => {
      const { orgID } = routeParams(routes.getOrganization, req);
      return groups.getGroup(ctx, applicationOf(req), orgID, organizationNotFound);
    },

    [routes.listOrganizationMembers.id]: (req) => {
      const { orgID } = routeParams(routes.listOrganizationMembers, req);
      const query = routeQuery(routes.listOrganizationMembers, req);
      return groups.listGroupMembers(ctx, applicationOf(req), orgID, query, organizationNotFound);
    },

    [routes.deleteOrganization.id]: async (req) => {
      const { orgID } = routeParams(routes.deleteOrganization, req);
      await groups.deleteGroup(ctx, applicationOf(req), orgID, organizationNotFound, req.ctx.requestId);
      return { success: true };
    },
  };
}
