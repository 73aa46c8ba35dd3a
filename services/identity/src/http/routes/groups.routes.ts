/** /v1/groups handlers: parse, call one use case, shape the response. */
import { applicationOf, identityRoutes as routes, routeBody, routeParams, routeQuery, setPageHeaders, type HandlerMap } from '@collab/shared';
import type { IdentityContext } from '../../domain/context.js';
import * as groups from '../../domain/groups/groups.js';
import { groupNotFound } from '../../domain/not-found.js';

export function groupHandlers(ctx: IdentityContext): HandlerMap {
  return {
    [routes.upsertGroup.id]: async (req) => {
      const { groupID } = routeParams(routes.upsertGroup, req);
      const body = routeBody(routes.upsertGroup, req);
      const outcome = await groups.upsertGroup(ctx, applicationOf(req), groupID, body);
      return { success: true, message: `You successfully ${outcome} group ${groupID}` };
    },

    [routes.updateGroupMembers.id]: async (req) => {
      const { groupID } = routeParams(routes.updateGroupMembers, req);
      // The group is checked before the body.
      await groups.assertGroupExists(ctx, applicationOf(req), groupID, groupNotFound(401));
      const body = routeBody(routes.updateGroupMembers, req);
      await groups.updateGroupMembers(ctx, applicationOf(req), groupID, body, groupNotFound(401));
      return { success: true, message: 'You successfully updated group members' };
    },

    [routes.listGroups.id]: async (req, res) => {
      const { limit, token } = routeQuery(routes.listGroups, req);
      if (limit === undefined) return groups.listGroups(ctx, applicationOf(req));
      const page = await groups.listGroupsPage(ctx, applicationOf(req), { limit, token });
      setPageHeaders(res, { path: '/v1/groups', query: req.query as Record<string, string>, total: page.total, nextToken: page.nextToken });
      return page.groups;
    },

    [routes.getGroup.id]: (req) => {
      const { groupID } = routeParams(routes.getGroup, req);
      return groups.getGroup(ctx, applicationOf(req), groupID, groupNotFound(404));
    },

    [routes.listGroupMembers.id]: (req) => {
      const { groupID } = routeParams(routes.listGroupMembers, req);
      const query = routeQuery(routes.listGroupMembers, req);
      return groups.listGroupMembers(ctx, applicationOf(req), groupID, query, groupNotFound(404));
    },

    [routes.deleteGroup.id]: async (req) => {
      const { groupID } = routeParams(routes.deleteGroup, req);
      await groups.deleteGroup(ctx, applicationOf(req), groupID, groupNotFound(401), req.ctx.requestId);
      return { success: true, message: `You successfully deleted group ${groupID}` };
    },
  };
}
