/**
 * The client-token reads identity serves (original-extras §4, decision 53): users as the viewer
 * may see them, limited to the viewer's groups. Presence is in presence.routes.ts.
 */
import { ApiError } from '../errors.js';
import { q, QueryParam, s, type JsonSchema } from '../schema/index.js';
import { defineRoute, param } from './route.js';

/** `users`: URI-encoded JSON array of user IDs (strings or numbers, numbers made strings). */
class UserIdsParam extends QueryParam<string[]> {
  parse(raw: unknown): string[] {
    const fail = () => new ApiError('invalid_request', 'Invalid request.');
    if (typeof raw !== 'string') throw fail();
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw fail();
    }
    if (!Array.isArray(value) || !value.every((id) => typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)))) throw fail();
    return value.map(String);
  }
  jsonSchema(): JsonSchema {
    return { type: 'string', description: this.description };
  }
}

/** A user as the browser SDK sees one (§4.6 ClientUserData). */
export const clientUserView = s.object({
  id: s.string(),
  name: s.string().nullable(),
  shortName: s.string().nullable(),
  displayName: s.string(),
  secondaryDisplayName: s.string(),
  profilePictureURL: s.string().nullable(),
  metadata: s.flatObject(),
});

export const clientRoutes = {
  clientUser: defineRoute({
    id: 'client.user',
    method: 'GET',
    path: '/v1/client/user/:userID',
    service: 'identity',
    auth: 'client',
    tag: 'Client',
    summary: "A user who shares one of the viewer's groups",
    params: { userID: param.identifier('userID', 'invalid_request') },
    response: { 200: clientUserView },
  }),
  clientUsers: defineRoute({
    id: 'client.users',
    method: 'GET',
    path: '/v1/client/users',
    service: 'identity',
    auth: 'client',
    tag: 'Client',
    summary: "Users by ID, each null unless it shares one of the viewer's groups",
    query: q.object({ users: new UserIdsParam('URI-encoded JSON array of user IDs') }),
    response: { 200: s.record(clientUserView.nullable()) },
  }),
  clientGroupMembers: defineRoute({
    id: 'client.groupMembers',
    method: 'GET',
    path: '/v1/client/groupMembers/:groupID',
    service: 'identity',
    auth: 'client',
    tag: 'Client',
    summary: 'The first 10 active members of a group the viewer belongs to',
    params: { groupID: param.identifier('groupID', 'invalid_request') },
    response: { 200: s.object({ groupMembers: s.array(clientUserView), loading: s.literal(false), hasMore: s.boolean() }) },
  }),
};
