/** Typed access to a request's validated input, per its route definition. */
import type { Request } from 'express';
import { ApiError } from '../errors.js';
import { parseJsonObject } from './json-body.js';
import type { RouteDef } from '../routes/route.js';
import { parseParams } from '../routes/route.js';
import type { InferQuery, InferShape, ObjectSchema, QuerySchema } from '../schema/index.js';

export type RouteBody<R extends RouteDef> = R['body'] extends ObjectSchema<infer S> ? InferShape<S> : never;
export type RouteQuery<R extends RouteDef> = R['query'] extends QuerySchema<infer S> ? InferQuery<S> : never;
export type RouteParams<R extends RouteDef> = Record<keyof R['params'] & string, string>;

export function routeParams<R extends RouteDef>(route: R, req: Request): RouteParams<R> {
  return parseParams(route, req.params as Record<string, string>);
}

export function routeBody<R extends RouteDef>(route: R, req: Request): RouteBody<R> {
  if (!route.body) throw new Error(`route ${route.id} declares no body`);
  return route.body.parse(parseJsonObject(Buffer.isBuffer(req.body) ? req.body : undefined)) as RouteBody<R>;
}

export function routeQuery<R extends RouteDef>(route: R, req: Request): RouteQuery<R> {
  if (!route.query) throw new Error(`route ${route.id} declares no query`);
  return route.query.parse(req.query as Record<string, unknown>) as RouteQuery<R>;
}

/** The application a verified token belongs to; services only see requests the gateway verified. */
export function applicationOf(req: Request): string {
  if (!req.ctx.applicationId) throw new ApiError('invalid_app_token', 'No application is associated with this request.');
  return req.ctx.applicationId;
}

export function customerOf(req: Request): string {
  if (!req.ctx.customerId) throw new ApiError('invalid_customer_token', 'No customer is associated with this request.');
  return req.ctx.customerId;
}

/**
 * The public base URL the client called, as the gateway forwards it (X-Forwarded-Host and -Proto),
 * for links back into the API.
 */
export function requestBaseUrl(req: Request): string {
  const forwarded = (name: string) => String(req.headers[name] ?? '').split(',')[0].trim();
  const host = forwarded('x-forwarded-host') || req.headers.host;
  const proto = forwarded('x-forwarded-proto') || req.protocol;
  return `${proto}://${host}`;
}
