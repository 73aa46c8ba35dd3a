/**
 * Builds the request handler of a service from the route table: every public route of the service
 * must have exactly one handler (the app refuses to build otherwise), requests are accepted only
 * with the gateway's internal credential, and errors render through the one error writer
 * (sendError).
 *
 * One plain `node:http` handler serves everything a service answers (health, readiness, the route
 * table's routes and the service-to-service routes under /internal), as the gateway serves its hot
 * path: Express's router and request decoration were a tenth of a service's CPU per request.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import { decodeViewer } from '../contracts/client-session.js';
import { ApiError } from '../errors.js';
import { INTERNAL_HEADERS } from '../internal-headers.js';
import type { Logger } from '../logger.js';
import { processMetrics, UNMATCHED_ROUTE, type ProcessMetrics } from '../metrics.js';
import { RouteMatcher, type RouteMatch } from '../routes/match.js';
import type { RouteDef } from '../routes/route.js';
import { sendError } from './errors-middleware.js';
import { idempotentHandler, NO_IDEMPOTENCY_KEY, type IdempotencyStore, type IdempotentRequest } from './idempotency.js';
import type { InternalRoute } from './internal-routes.js';
import { readJsonBody } from './json-body.js';
import { readinessHandler, type ReadinessCheck } from './readiness.js';
import type { RequestContext } from './request-context.js';
import { sendJson } from './respond.js';

/** A request to one of the route table's routes, as its handler gets it. */
export interface ServiceRequest extends IdempotentRequest {
  ctx: RequestContext;
  /** The route's path parameters, percent-decoded. */
  params: Record<string, string>;
  /** The query string, parsed by node:querystring (a repeated name gives an array). */
  query: ParsedUrlQuery;
}
export type ServiceResponse = ServerResponse;

/** Parses, calls one use case, and returns the response body (sent as JSON with status 200). */
export type RouteHandler = (req: ServiceRequest, res: ServiceResponse) => unknown;
export type HandlerMap = Record<string, RouteHandler>;

export interface ServiceAppOptions {
  service: string;
  logger: Logger;
  internalToken: string;
  routes: readonly RouteDef[];
  handlers: HandlerMap;
  /** Service-to-service endpoints, under /internal. */
  internal?: readonly InternalRoute[];
  readiness: ReadinessCheck[];
  isDraining?: () => boolean;
  /** Where request durations are recorded; the process's metrics unless given. */
  metrics?: ProcessMetrics;
  /** The service's Idempotency-Key records; required when one of its routes is `idempotent`. */
  idempotency?: IdempotencyStore;
  /**
   * Runs after the handler of every route that is not a GET, once its writes have committed and
   * before anything is answered (also when the handler failed: it may have committed first).
   * Must not throw.
   */
  afterWrite?: (ctx: RequestContext) => Promise<void>;
}

/** What a service's wiring hands its app: everything but its name, routes and handlers, which its app.ts names. */
export type ServiceAppWiring = Omit<ServiceAppOptions, 'service' | 'routes' | 'handlers'>;

/** How long one readiness check (Postgres, Redis, pending migrations) may take. */
const READINESS_TIMEOUT_MS = 2000;

export function assertHandlersMatchRoutes(service: string, routes: readonly RouteDef[], handlers: HandlerMap): void {
  const routeIds = new Set(routes.map((route) => route.id));
  const missing = [...routeIds].filter((id) => !handlers[id]);
  const unknown = Object.keys(handlers).filter((id) => !routeIds.has(id));
  if (missing.length > 0 || unknown.length > 0)
    throw new Error(
      `${service}: route table and handlers differ (missing handlers: ${missing.join(', ') || 'none'}; ` +
        `handlers without a route: ${unknown.join(', ') || 'none'})`,
    );
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The verified caller the gateway names in internal headers, or null without the internal credential. */
function callerOf(req: IncomingMessage, internalToken: string, requestId: string): RequestContext | null {
  const presented = header(req, INTERNAL_HEADERS.internalToken);
  if (!presented || !safeEqual(presented, internalToken)) return null;
  return {
    requestId,
    applicationId: header(req, INTERNAL_HEADERS.applicationId),
    customerId: header(req, INTERNAL_HEADERS.customerId),
    viewer: decodeViewer(header(req, INTERNAL_HEADERS.viewer)),
  };
}

/** One child logger per request (each costs its bindings' serialisation). */
function requestLogger(logger: Logger, ctx: { requestId: string; applicationId?: string }): Logger {
  return logger.child(ctx.applicationId ? { requestId: ctx.requestId, applicationId: ctx.applicationId } : { requestId: ctx.requestId });
}

export function createServiceApp(options: ServiceAppOptions): RequestListener {
  const { service, logger, internalToken, routes, handlers } = options;
  assertHandlersMatchRoutes(service, routes, handlers);
  const metrics = options.metrics ?? processMetrics();
  const idempotentRoutes = routes.filter((route) => route.idempotent).map((route) => route.id);
  if (idempotentRoutes.length > 0 && !options.idempotency)
    throw new Error(`${service}: routes ${idempotentRoutes.join(', ')} take an Idempotency-Key but no idempotency store was given`);

  const matcher = new RouteMatcher(routes);
  const { afterWrite } = options;
  const handlerOf = (route: RouteDef) => (afterWrite && route.method !== 'GET' ? followedBy(handlers[route.id], afterWrite) : handlers[route.id]);
  const serve = new Map<RouteDef, RouteHandler>(
    routes.map((route) => [
      route,
      route.idempotent
        ? idempotentHandler({ route, store: options.idempotency!, onReplay: metrics.watchIdempotentRoute(route.path) }, handlerOf(route))
        : answeredAsJson(handlerOf(route)),
    ]),
  );
  const internal = new RouteMatcher(options.internal ?? []);
  const readiness = readinessHandler(options.readiness, { timeoutMs: READINESS_TIMEOUT_MS, isDraining: options.isDraining });

  return (req, res) => {
    const url = req.url ?? '';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const method = req.method ?? '';
    // Health checks come first: no credential, and not counted in the request durations.
    if (path === '/healthz' && (method === 'GET' || method === 'HEAD')) return sendJson(res, { status: 'ok', service });
    if (path === '/readyz' && (method === 'GET' || method === 'HEAD')) return void readiness(req, res);

    const lookup = url.startsWith('/') ? matcher.lookup(method, path) : null;
    const internalLookup = lookup?.kind === 'match' || !path.startsWith('/internal/') ? null : internal.lookup(method, path);
    const route = lookup?.kind === 'match' ? lookup.match.route.path : internalLookup?.kind === 'match' ? internalLookup.match.route.path : null;
    const requestId = header(req, INTERNAL_HEADERS.requestId) ?? randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const ctx = callerOf(req, internalToken, requestId);
    metrics.timeResponse(req, res, () => (ctx && route) || UNMATCHED_ROUTE);
    const log = requestLogger(logger, ctx ?? { requestId });
    const fail = (error: unknown) => sendError(req, res, error, log);
    // Everything but health is reachable only through the gateway (or another service).
    if (!ctx) return fail(new ApiError('not_found', 'Not found.'));
    logRequest(req, log, res);
    if (lookup?.kind === 'match') {
      const request = Object.assign(req, {
        ctx,
        log,
        path,
        params: {},
        query: parseQuery(queryAt === -1 ? '' : url.slice(queryAt + 1)),
        body: undefined,
        idempotency: NO_IDEMPOTENCY_KEY,
      }) satisfies ServiceRequest;
      answer(request, res, lookup.match, serve.get(lookup.match.route)!).catch(fail);
    } else if (internalLookup?.kind === 'match') answerInternal(req, res, internalLookup.match, { ctx, log }).catch(fail);
    else fail(new ApiError('not_found', `No route for ${method} ${path}.`));
  };
}

async function answer(req: ServiceRequest, res: ServerResponse, match: RouteMatch<RouteDef>, handler: RouteHandler): Promise<void> {
  // Through the gateway such a path is refused before (invalid_field, naming the parameter).
  if (match.undecodableParam !== undefined) throw new ApiError('invalid_request', 'Request path is not valid percent-encoding.');
  req.params = match.params;
  // Bodies are read to the end even where the route takes none: Node stops reading a keep-alive
  // connection whose request body is left unread once the response is sent, which would stall
  // the client's upload and the next request on that connection until the keep-alive timeout.
  if (match.route.bodyType === undefined) req.body = await readJsonBody(req);
  await handler(req, res);
}

/** A service-to-service call: its JSON body (within the route's limit) parsed, its answer sent as JSON. */
async function answerInternal(
  req: IncomingMessage,
  res: ServerResponse,
  match: RouteMatch<InternalRoute>,
  context: { ctx: RequestContext; log: Logger },
): Promise<void> {
  if (match.undecodableParam !== undefined) throw new ApiError('invalid_request', 'Request path is not valid percent-encoding.');
  const raw = await readJsonBody(req, match.route.bodyLimit);
  let body: unknown;
  try {
    body = raw.length === 0 ? undefined : JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new ApiError('invalid_request', `Request body is not valid JSON: ${(error as Error).message}`);
  }
  sendJson(res, await match.route.handle({ ...context, params: match.params, body }));
}

/** The handler, then `afterWrite` before its answer is sent (the handler's or the one its error makes). */
function followedBy(handler: RouteHandler, afterWrite: (ctx: RequestContext) => Promise<void>): RouteHandler {
  return async (req, res) => {
    try {
      return await handler(req, res);
    } finally {
      await afterWrite(req.ctx);
    }
  };
}

/** Sends what a handler returns as JSON, unless the handler answered itself. */
function answeredAsJson(handler: RouteHandler): RouteHandler {
  return async (req, res) => {
    const body = await handler(req, res);
    if (!res.headersSent) sendJson(res, body);
  };
}

/** At debug: the gateway logs each request once at info, with the same request id. */
function logRequest(req: IncomingMessage, log: Logger, res: ServerResponse): void {
  if (!log.isLevelEnabled('debug')) return;
  const started = process.hrtime.bigint();
  const url = (req.url ?? '').split('?')[0];
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    log.debug({ method: req.method, url, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
  });
}
