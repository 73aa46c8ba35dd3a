/**
 * The shape of one public route. The route table built from these drives the gateway's
 * routing, authentication and 404/405 answers, each service's handler registry and request
 * validation, the OpenAPI document and the tenant-isolation tests.
 */
import { ApiError, type ErrorCode } from '../errors.js';
import { isIdentifier, isServerGeneratedId, isUuid } from '../schema/formats.js';
import type { JsonSchema, ObjectSchema, QuerySchema, QueryShape, Schema, Shape } from '../schema/index.js';

export type ServiceName = 'identity' | 'conversation' | 'notification' | 'webhooks' | 'mail';
export type HttpMethod = 'GET' | 'PUT' | 'POST' | 'DELETE';
/**
 * `app`: a server token signed with the application's secret, or an access token.
 * `customer`: the application-management token signed with the customer's secret.
 * `client`: a client token, a JWT signed with the application's secret naming a user (the viewer).
 * `inbound`: HTTP Basic credentials of the inbound-mail parser (INBOUND_EMAIL_USERNAME/PASSWORD);
 *   with none configured the route answers 404.
 * `none`: no Authorization header (only POST /v1/authorize).
 */
export type AuthKind = 'app' | 'customer' | 'client' | 'inbound' | 'none';

export type PathParamFormat = 'identifier' | 'identifier-or-server-id' | 'uuid' | 'any';

/** A path parameter: how it is validated and which code/label an invalid value produces. */
export interface PathParam {
  format: PathParamFormat;
  /** Name used in messages, e.g. `orgID` in `Input type for orgID is not valid, …`. */
  label: string;
  code: ErrorCode;
  /** Overrides the default `Input type for <label> is not valid, expected <format>.` */
  message?: string;
}

/** A success answer whose body is not JSON (a file, a dump): its media type and what it holds. */
export interface RawAnswer {
  mediaType: string;
  description: string;
  schema: JsonSchema;
}

export type SuccessStatus = 200 | 201 | 202;

/**
 * What a route answers on success, by status: the schema of its JSON body, or a body that is not
 * JSON. The OpenAPI document describes each, and the integration tests check every JSON answer
 * they receive against its schema, so a view that drifts from its schema fails a test.
 */
export type RouteResponse = { [S in SuccessStatus]?: Schema<unknown> | RawAnswer };

export interface RouteDef {
  /** Stable handler key, e.g. `users.upsert`. */
  id: string;
  method: HttpMethod;
  /** Express-style path, e.g. `/v1/users/:userID`. */
  path: string;
  service: ServiceName;
  auth: AuthKind;
  summary: string;
  tag: string;
  params?: Record<string, PathParam>;
  body?: ObjectSchema<Shape>;
  query?: QuerySchema<QueryShape>;
  /**
   * Request body type when it is not JSON: `multipart` (a file upload), `dump` (a customer dump,
   * as the raw body or the `dump` part of multipart form data). Both are streamed to the service
   * and read by its handler, without the 10 MB limit of JSON bodies. `form`: the fields of an HTML
   * form (multipart or URL-encoded), `body` naming those read (others are ignored, files dropped).
   */
  bodyType?: 'multipart' | 'dump' | 'form';
  /**
   * Takes an `Idempotency-Key` header: a write that is not naturally idempotent, whose retry with
   * the same key answers the first answer instead of writing again (http/idempotency.ts).
   */
  idempotent?: true;
  response: RouteResponse;
}

export function defineRoute<const R extends RouteDef>(route: R): R {
  return route;
}

const FORMAT_CHECKS: Record<PathParamFormat, (value: string) => boolean> = {
  identifier: isIdentifier,
  'identifier-or-server-id': (value) => isIdentifier(value) || isServerGeneratedId(value),
  uuid: isUuid,
  any: () => true,
};
const FORMAT_WORDS: Record<PathParamFormat, string> = {
  identifier: 'identifier',
  'identifier-or-server-id': 'identifier',
  uuid: 'UUID',
  any: 'string',
};

export const param = {
  identifier: (label: string, code: ErrorCode = 'invalid_field', message?: string): PathParam => ({
    format: 'identifier',
    label,
    code,
    message,
  }),
  identifierOrServerId: (label: string, code: ErrorCode, message?: string): PathParam => ({
    format: 'identifier-or-server-id',
    label,
    code,
    message,
  }),
  uuid: (label: string, code: ErrorCode, message?: string): PathParam => ({
    format: 'uuid',
    label,
    code,
    message,
  }),
};

/** Validates path parameters (already percent-decoded) against the route's rules. */
export function parseParams<R extends RouteDef>(
  route: R,
  raw: Record<string, string>,
): Record<keyof R['params'] & string, string> {
  const output: Record<string, string> = {};
  for (const [name, rule] of Object.entries(route.params ?? {})) {
    const value = raw[name] ?? '';
    if (!FORMAT_CHECKS[rule.format](value))
      throw new ApiError(
        rule.code,
        rule.message ?? `Input type for ${rule.label} is not valid, expected ${FORMAT_WORDS[rule.format]}.`,
      );
    output[name] = value;
  }
  return output as Record<keyof R['params'] & string, string>;
}

type Prefixed<P extends string, T> = { [K in keyof T & string as `${P}${Capitalize<K>}`]: T[K] };

/** Names a group of routes served under two prefixes apart (`/v1/applications…` and `/v1/projects…`). */
export function prefixKeys<P extends string, T extends Record<string, unknown>>(prefix: P, routes: T): Prefixed<P, T> {
  return Object.fromEntries(
    Object.entries(routes).map(([key, value]) => [`${prefix}${key[0].toUpperCase()}${key.slice(1)}`, value]),
  ) as Prefixed<P, T>;
}
