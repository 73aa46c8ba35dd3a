/**
 * Presence (decision 50): where users are, inside one group. Ephemeral presence expires unless
 * renewed; durable presence is a "last seen here at T" record. Owned by identity.
 */
import { ApiError } from '../errors.js';
import { FlatObjectSchema, QueryParam, q, s, type FlatJson, type JsonSchema } from '../schema/index.js';
import { defineRoute, param } from './route.js';
import { successView } from './views.js';

const flatObject = new FlatObjectSchema();

/** `location`: the JSON text of a flat object, required. */
export class LocationQueryParam extends QueryParam<FlatJson> {
  parse(raw: unknown): FlatJson {
    if (raw === undefined || raw === '') throw new ApiError('invalid_request', '"location" parameter is required');
    try {
      if (typeof raw !== 'string') throw new Error('not text');
      return flatObject.parse(JSON.parse(raw), ['location']);
    } catch {
      throw new ApiError('invalid_field', '"location" must be a location');
    }
  }
  jsonSchema(): JsonSchema {
    return { type: 'string', description: 'URI-encoded JSON of a flat object' };
  }
}

/** `true`/`false` in any case; absent is false. */
export class BooleanQueryParam extends QueryParam<boolean> {
  constructor(private readonly name: string) {
    super(`"${name}": true or false (default false).`);
  }
  parse(raw: unknown): boolean {
    if (raw === undefined || raw === '') return false;
    const text = typeof raw === 'string' ? raw.toLowerCase() : '';
    if (text !== 'true' && text !== 'false') throw new ApiError('invalid_field', `"${this.name}" must be a boolean`);
    return text === 'true';
  }
  jsonSchema(): JsonSchema {
    return { type: 'string', enum: ['true', 'false'], default: 'false' };
  }
}

/** One user's presence: ephemeral locations now, and the latest durable record (omitted when none). */
export const userLocationView = s.object({
  id: s.string(),
  ephemeral: s.object({ locations: s.array(s.flatObject()) }),
  durable: s.object({ location: s.flatObject(), timestamp: s.dateTime() }).optional(),
});

/** The query of every presence read. */
export const presenceQuery = q.object({
  location: new LocationQueryParam('The location, as URI-encoded JSON of a flat object.'),
  partial_match: new BooleanQueryParam('partial_match'),
  exclude_durable: new BooleanQueryParam('exclude_durable'),
});

export const presenceRoutes = {
  updatePresence: defineRoute({
    id: 'presence.update',
    method: 'PUT',
    path: '/v1/users/:userID/presence',
    service: 'identity',
    auth: 'app',
    tag: 'Presence',
    summary: "Mark a user present at (or absent from) a location in a group",
    params: { userID: param.identifier('userID') },
    body: s.object({
      location: s.flatObject(),
      groupID: s.string({ minLength: 1 }).optional(),
      organizationID: s.string({ minLength: 1 }).optional(),
      durable: s.boolean().optional(),
      absent: s.boolean().optional(),
      exclusiveWithin: s.flatObject().optional(),
    }),
    response: { 200: successView },
  }),
  getPresence: defineRoute({
    id: 'presence.get',
    method: 'GET',
    path: '/v1/users/:userID/presence',
    service: 'identity',
    auth: 'app',
    tag: 'Presence',
    summary: "A user's presence at a location, in every group of theirs",
    params: { userID: param.identifier('userID', 'invalid_request') },
    query: presenceQuery,
    response: { 200: userLocationView },
  }),
};
