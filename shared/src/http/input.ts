/** Typed access to a request's validated input, per its route definition. */
import type { Viewer } from '../contracts/client-session.js';
import { ApiError } from '../errors.js';
import { parseJsonObject } from './json-body.js';
import { requestProtocol } from './respond.js';
import type { ServiceRequest } from './service-app.js';
import type { RouteDef } from '../routes/route.js';
import { parseParams } from '../routes/route.js';
import type { InferQuery, InferShape, ObjectSchema, QuerySchema } from '../schema/index.js';

export type RouteBody<R extends RouteDef> = R['body'] extends ObjectSchema<infer S> ? InferShape<S> : never;
export type RouteQuery<R extends RouteDef> = R['query'] extends QuerySchema<infer S> ? InferQuery<S> : never;
export type RouteParams<R extends RouteDef> = Record<keyof R['params'] & string, string>;

export function routeParams<R extends RouteDef>(route: R, req: ServiceRequest): RouteParams<R> {
  return parseParams(route, req.params);
}

export function routeBody<R extends RouteDef>(route: R, req: ServiceRequest): RouteBody<R> {
  if (!route.body) throw new Error(`route ${route.id} declares no body`);
  return route.body.parse(parseJsonObject(req.body)) as RouteBody<R>;
}

export function routeQuery<R extends RouteDef>(route: R, req: ServiceRequest): RouteQuery<R> {
  if (!route.query) throw new Error(`route ${route.id} declares no query`);
  return route.query.parse(req.query) as RouteQuery<R>;
}

/** The application a verified token belongs to; services only see requests the gateway verified. */
export function applicationOf(req: ServiceRequest): string {
  if (!req.ctx.applicationId) throw new ApiError('invalid_app_token', 'No application is associated with this request.');
  return req.ctx.applicationId;
}

/** The viewer of a verified client token (the /v1/client routes). */
export function viewerOf(req: ServiceRequest): Viewer {
  if (!req.ctx.viewer) throw new ApiError('invalid_session', 'No client token is associated with this request.');
  return req.ctx.viewer;
}

export function customerOf(req: ServiceRequest): string {
  if (!req.ctx.customerId) throw new ApiError('invalid_customer_token', 'No customer is associated with this request.');
  return req.ctx.customerId;
}

/**
 * The public base URL the client called, as the gateway forwards it (X-Forwarded-Host and -Proto),
 * for links back into the API.
 */
export function requestBaseUrl(req: ServiceRequest): string {
  const forwarded = (name: string) => String(req.headers[name] ?? '').split(',')[0].trim();
  const host = forwarded('x-forwarded-host') || req.headers.host;
  const proto = forwarded('x-forwarded-proto') || requestProtocol(req);
  return `${proto}://${host}`;
}
