/**
 * The service-to-service endpoints under /internal, as a list each service hands its app: a method,
 * the contract's path, and a handler that returns the JSON answer. Served by the same plain handler
 * as the public routes (service-app.ts), behind the same internal credential.
 */
import type { Logger } from '../logger.js';
import { ApiError } from '../errors.js';
import type { HttpMethod } from '../routes/route.js';
import type { RequestContext } from './request-context.js';

export interface InternalRequest {
  ctx: RequestContext;
  log: Logger;
  /** The path's parameters, percent-decoded. */
  params: Record<string, string>;
  /** The parsed JSON body (undefined without one). */
  body: unknown;
}

export interface InternalRoute {
  method: HttpMethod;
  /** The full path, `/internal/…`, with `:name` parameters (the contract's path). */
  path: string;
  /** The largest body taken, in bytes; what a caller may legitimately send at once. */
  bodyLimit: number;
  /** Returns the answer, sent as JSON (a `JsonText` is sent as it is). */
  handle: (req: InternalRequest) => Promise<unknown>;
}

/** The body limit of most internal calls: a request names a few ids. */
export const SMALL_INTERNAL_BODY_BYTES = 64 * 1024;

export function internalRoute(method: HttpMethod, path: string, bodyLimit: number, handle: InternalRoute['handle']): InternalRoute {
  if (!path.startsWith('/internal/')) throw new Error(`internal route ${path} is not under /internal`);
  return { method, path, bodyLimit, handle };
}

/** The application the calling service names; every internal call but the gateway's own lookups has one. */
export function internalApplicationOf(req: InternalRequest): string {
  if (!req.ctx.applicationId) throw new ApiError('invalid_request', 'The application header is required.');
  return req.ctx.applicationId;
}
