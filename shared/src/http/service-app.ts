/**
 * Builds the Express app of a service from the route table: every public route of the service
 * must have exactly one handler (the app refuses to build otherwise), requests are accepted only
 * with the gateway's internal credential, and errors render through the one error middleware.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import express, { type Express, type Request, type RequestHandler, type Response, type Router } from 'express';
import { decodeViewer, type Viewer } from '../contracts/client-session.js';
import { ApiError } from '../errors.js';
import { INTERNAL_HEADERS } from '../internal-headers.js';
import type { Logger } from '../logger.js';
import { processMetrics, setMetricsRoute, type ProcessMetrics } from '../metrics.js';
import type { RouteDef } from '../routes/route.js';
import { errorMiddleware, notFoundMiddleware } from './errors-middleware.js';
import { idempotentHandler, type IdempotencyStore } from './idempotency.js';
import { rawJsonBody } from './json-body.js';
import { readinessHandler, type ReadinessCheck } from './readiness.js';

export interface RequestContext {
  requestId: string;
  /** The application a verified server or access token belongs to. */
  applicationId?: string;
  /** The customer a verified application-management token belongs to. */
  customerId?: string;
  /** The viewer of a verified client token. */
  viewer?: Viewer;
}

declare module 'express-serve-static-core' {
  interface Request {
    ctx: RequestContext;
    log: Logger;
  }
}

/** Parses, calls one use case, and returns the response body (sent as JSON with status 200). */
export type RouteHandler = (req: Request, res: Response) => unknown;
export type HandlerMap = Record<string, RouteHandler>;

export interface ServiceAppOptions {
  service: string;
  logger: Logger;
  internalToken: string;
  routes: readonly RouteDef[];
  handlers: HandlerMap;
  /** Service-to-service endpoints, mounted under /internal. */
  internal?: Router;
  readiness: ReadinessCheck[];
  isDraining?: () => boolean;
  /** Where request durations are recorded; the process's metrics unless given. */
  metrics?: ProcessMetrics;
  /** The service's Idempotency-Key records; required when one of its routes is `idempotent`. */
  idempotency?: IdempotencyStore;
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

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function createServiceApp(options: ServiceAppOptions): Express {
  const { service, logger, internalToken, routes, handlers } = options;
  assertHandlersMatchRoutes(service, routes, handlers);
  const metrics = options.metrics ?? processMetrics();
  const idempotentRoutes = routes.filter((route) => route.idempotent).map((route) => route.id);
  if (idempotentRoutes.length > 0 && !options.idempotency)
    throw new Error(`${service}: routes ${idempotentRoutes.join(', ')} take an Idempotency-Key but no idempotency store was given`);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service });
  });
  app.get('/readyz', readinessHandler(options.readiness, { timeoutMs: READINESS_TIMEOUT_MS, isDraining: options.isDraining }));

  // Request durations by route pattern (health checks are not counted).
  app.use(metrics.middleware);

  // Everything below is reachable only through the gateway (or another service).
  app.use((req, res, next) => {
    const requestId = header(req, INTERNAL_HEADERS.requestId) ?? randomUUID();
    const presented = header(req, INTERNAL_HEADERS.internalToken);
    res.setHeader('X-Request-Id', requestId);
    if (!presented || !safeEqual(presented, internalToken)) {
      req.log = logger.child({ requestId });
      next(new ApiError('not_found', 'Not found.'));
      return;
    }
    req.ctx = {
      requestId,
      applicationId: header(req, INTERNAL_HEADERS.applicationId),
      customerId: header(req, INTERNAL_HEADERS.customerId),
      viewer: decodeViewer(header(req, INTERNAL_HEADERS.viewer)),
    };
    // One child logger per request (each costs its bindings' serialisation).
    req.log = logger.child(req.ctx.applicationId ? { requestId, applicationId: req.ctx.applicationId } : { requestId });
    logRequest(req, res);
    next();
  });

  if (options.internal) app.use('/internal', options.internal);

  for (const route of routes) {
    const method = route.method.toLowerCase() as 'get' | 'put' | 'post' | 'delete';
    // Bodies are read to the end even where the route takes none: Node stops reading a keep-alive
    // connection whose request body is left unread once the response is sent, which would stall
    // the client's upload and the next request on that connection until the keep-alive timeout.
    const stack: RequestHandler[] = route.bodyType === undefined ? [rawJsonBody] : [];
    const markRoute: RequestHandler = (_req, res, next) => {
      setMetricsRoute(res, route.path);
      next();
    };
    const handler = route.idempotent
      ? idempotentHandler(
          { route, store: options.idempotency!, onReplay: metrics.watchIdempotentRoute(route.path) },
          handlers[route.id],
        )
      : asRouteHandler(handlers[route.id]);
    app[method](route.path, markRoute, ...stack, handler);
  }

  app.use(notFoundMiddleware);
  app.use(errorMiddleware(logger));
  return app;
}

/** Sends what a handler returns as JSON, unless the handler answered itself. */
export function asRouteHandler(handler: RouteHandler): RequestHandler {
  return async (req, res) => {
    const body = await handler(req, res);
    if (!res.headersSent) res.json(body);
  };
}

/** At debug: the gateway logs each request once at info, with the same request id. */
function logRequest(req: Request, res: Response): void {
  if (!req.log.isLevelEnabled('debug')) return;
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    req.log.debug(
      { method: req.method, url: req.originalUrl.split('?')[0], status: res.statusCode, ms: Math.round(ms * 10) / 10 },
      'request',
    );
  });
}
