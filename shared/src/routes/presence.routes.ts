/**
 * Presence routes (decision 50): a user's ephemeral and durable presence at a location, set with a
 * server token and read back with one or, for the viewer's groups, with a client token. Served by
 * identity, which owns users and groups.
 */
import { ApiError } from '../errors.js';
import { FlatObjectSchema, QueryParam, q, s, type JsonSchema } from '../schema/index.js';
import { defineRoute, param } from './route.js';

/** A location: a flat JSON object of strings, numbers and booleans. */
export type PresenceLocation = Record<string, string | number | boolean>;

const flatObject = new FlatObjectSchema();

/** `location`: URI-encoded JSON of a location, required. */
class LocationParam extends QueryParam<PresenceLocation> {
  parse(raw: unknown): PresenceLocation {
    if (raw === undefined || raw === '') throw new ApiError('invalid_request', '"location" parameter is required');
    const fail = () => new ApiError('invalid_field', '"location" must be a location');
    if (typeof raw !== 'string') throw fail();
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw fail();
    }
    try {
      return flatObject.parse(value, ['location']);
    } catch {
      throw fail();
    }
  }
  jsonSchema(): JsonSchema {
    return { type: 'string', description: this.description };
  }
}

const booleanParam = (name: string, description: string) =>
  q.enum(['true', 'false'], { code: 'invalid_field', message: `"${name}" must be a boolean` }, description);

export const presenceBody = s.object({
  location: s.flatObject(),
  groupID: s.string({ minLength: 1 }).optional(),
  organizationID: s.string({ minLength: 1 }).optional(),
  durable: s.boolean().optional(),
  absent: s.boolean().optional(),
  exclusiveWithin: s.flatObject().optional(),
});

/** One user's presence: current ephemeral locations and the latest durable one. */
export const userLocationView = s.object({
  id: s.string(),
  ephemeral: s.object({ locations: s.array(s.flatObject()) }),
  durable: s.object({ location: s.flatObject(), timestamp: s.dateTime() }).optional(),
});

export const presenceQuery = q.object({
  location: new LocationParam('URI-encoded JSON of the location to read'),
  partial_match: booleanParam('partial_match', 'true: every location that contains `location`; false (default): exactly `location`'),
  exclude_durable: booleanParam('exclude_durable', 'true: leave durable presence out'),
});

export const presenceRoutes = {
  updatePresence: defineRoute({
    id: 'presence.update',
    method: 'PUT',
    path: '/v1/users/:userID/presence',
    service: 'identity',
    auth: 'app',
    tag: 'Presence',
    summary: "Set a user's presence at a location",
    params: { userID: param.identifier('userID') },
    body: presenceBody,
    response: { 200: s.object({ success: s.literal(true), message: s.string() }) },
  }),
  getUserPresence: defineRoute({
    id: 'presence.getUser',
    method: 'GET',
    path: '/v1/users/:userID/presence',
    service: 'identity',
    auth: 'app',
    tag: 'Presence',
    summary: "Read a user's presence at a location, in every group the user belongs to",
    params: { userID: param.identifier('userID', 'invalid_request') },
    query: presenceQuery,
    response: { 200: s.array(userLocationView) },
  }),
  clientPresence: defineRoute({
    id: 'client.presence',
    method: 'GET',
    path: '/v1/client/presence',
    service: 'identity',
    auth: 'client',
    tag: 'Client',
    summary: "Everyone's presence at a location in the viewer's groups",
    query: presenceQuery,
    response: { 200: s.array(userLocationView) },
  }),
};
