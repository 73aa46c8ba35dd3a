/**
 * The gateway's request handler: request ids, CORS, route lookup against the shared route table
 * (404 and 405 with Allow), the 10 MB body limit, token verification for the route's kind, the
 * caller's rate limit, then the proxy to the owning service with the verified caller in internal
 * headers. An Express app serves the rest: health and readiness, the API reference
 * (`GET /v1/openapi.json` and the Swagger UI page `GET /docs` with its assets from
 * swagger-ui-dist), the operators' queue dashboard, the console, and the errors for paths no route knows.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  ApiError,
  buildOpenApiDocument,
  errorMiddleware,
  encodeViewer,
  INTERNAL_HEADERS,
  processMetrics,
  ROUTES,
  RouteMatcher,
  sendError,
  serializeOpenApiDocument,
  readinessHandler,
  setMetricsRoute,
  type Logger,
  type ProcessMetrics,
  type ReadinessCheck,
  type RouteDef,
  type RouteMatch,
  type ServiceName,
} from '@collab/shared';
import express, { type Express, type RequestHandler } from 'express';
import { operatorAuth, QUEUE_DASHBOARD_PATH, type OperatorCredentials } from './admin/queue-dashboard.js';
import type { Authenticate, Caller } from './auth/authenticate.js';
import { CONSOLE_PATH, createConsoleRouter, type ConsoleDeps } from './console/console.router.js';
import { refuseOversizedBody } from './limits/body-size.js';
import type { RateLimit } from './limits/rate-limit.js';

export interface GatewayAppOptions {
  logger: Logger;
  internalToken: string;
  authenticate: Authenticate;
  proxies: Record<ServiceName, Forward>;
  readiness: ReadinessCheck[];
  isDraining: () => boolean;
  routes?: readonly RouteDef[];
  /** Where request durations are recorded; the process's metrics unless given. */
  metrics?: ProcessMetrics;
  /**
   * The operators' queue dashboard (bull-board router) served at /admin/queues behind HTTP Basic
   * auth with these credentials; 404 there unless both are given.
   */
  queueDashboard?: { router: RequestHandler; credentials: OperatorCredentials | null };
  /** The per-caller rate limit, applied once the caller is known; none unless given. */
  rateLimit?: RateLimit;
  /** The console at /console (its sessions, sign-in and status); 404 there unless given. */
  console?: Omit<ConsoleDeps, 'matcher' | 'forwardAs'>;
}

/** Hands a request to a service (http-proxy-middleware's handler); `next(error)` when it cannot. */
export type Forward = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/** What the gateway knows about a request it serves, for its one log line. */
interface RequestRecord {
  requestId: string;
  applicationId?: string;
}

const CLIENT_FORBIDDEN_HEADERS = [
  INTERNAL_HEADERS.internalToken,
  INTERNAL_HEADERS.applicationId,
  INTERNAL_HEADERS.customerId,
  INTERNAL_HEADERS.viewer,
  INTERNAL_HEADERS.requestId,
];

/** swagger-ui-dist's files the docs page loads; nothing else of the package is served. */
const SWAGGER_UI_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png'];
const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/swagger-ui-bundle.js'));

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>collab-backend API reference</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/docs/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-initializer.js"></script>
</body>
</html>
`;

// No validator badge (it would call an outside service) and no URL bar: this page shows this API.
const DOCS_INITIALIZER = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
};
`;

// Everything the page loads comes from this gateway, so it renders offline.
const DOCS_CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Requests for the route table's routes are handled without Express: it is the gateway's hot path,
 * and Express's router, request decoration and a logger per request were over a third of the
 * gateway's CPU per proxied request. Everything else, and a request whose target is not a plain
 * path (which Express parses), goes to the Express app, which forwards the same way.
 */
export function createGatewayApp(options: GatewayAppOptions): RequestListener {
  const routes = options.routes ?? ROUTES;
  const matcher = new RouteMatcher(routes);
  const metrics = options.metrics ?? processMetrics();
  const forward = forwarding(options);
  const requestLog = requestLogger(options.logger);
  const site = siteApp(options, routes, matcher, metrics, forward, requestLog);
  return (req, res) => {
    const path = plainPath(req.url ?? '');
    const lookup = path === null ? null : matcher.lookup(req.method ?? '', path);
    if (lookup?.kind !== 'match') {
      site(req, res);
      return;
    }
    metrics.timeResponse(req, res, () => lookup.match.route.path);
    forward(req, res, lookup.match, beginRequest(req, res, requestLog));
  };
}

/** The path of a request target that is a plain path and query (no fragment); null for anything else. */
function plainPath(url: string): string | null {
  if (!url.startsWith('/') || url.includes('#')) return null;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Checks a request for its route (body size, token, rate limit, path parameters), then hands it to
 * the owning service with the verified caller in internal headers.
 */
function forwarding(options: GatewayAppOptions) {
  const { logger } = options;
  /** `signedIn`: the caller the console's session names, instead of the request's bearer token. */
  return (req: IncomingMessage, res: ServerResponse, match: RouteMatch<RouteDef>, record: RequestRecord, signedIn?: Caller): void => {
    // The request's logger is made only for an error: the one line of a request needs none.
    const fail = (error: unknown) => sendError(req, res, error, logger.child({ ...record }));
    allowAnyOrigin(res);
    const { route, undecodableParam } = match;
    const check = async () => {
      refuseOversizedBody(route, req.headers);
      const caller = signedIn ?? (await options.authenticate(route.auth, req.headers.authorization, record.requestId));
      await options.rateLimit?.(caller, res);
      // Checked where a service checks its path parameters: after the caller is known.
      if (undecodableParam !== undefined)
        throw new ApiError('invalid_field', `${undecodableParam} is not valid: its percent-encoding does not decode to UTF-8 text.`);
      delete req.headers.authorization;
      req.headers[INTERNAL_HEADERS.internalToken] = options.internalToken;
      if (caller.applicationId) {
        req.headers[INTERNAL_HEADERS.applicationId] = caller.applicationId;
        record.applicationId = caller.applicationId;
      }
      if (caller.customerId) req.headers[INTERNAL_HEADERS.customerId] = caller.customerId;
      if (caller.viewer) req.headers[INTERNAL_HEADERS.viewer] = encodeViewer(caller.viewer);
      options.proxies[route.service](req, res, fail);
    };
    check().catch(fail);
  };
}

/**
 * The Express app for what is not an API route: health, readiness, the API reference, the queue
 * dashboard, CORS preflights, and 404 or 405 for the rest (a route's request whose target Express
 * parses is forwarded from here).
 */
function siteApp(
  options: GatewayAppOptions,
  routes: readonly RouteDef[],
  matcher: RouteMatcher<RouteDef>,
  metrics: ProcessMetrics,
  forward: ReturnType<typeof forwarding>,
  requestLog: Logger,
): Express {
  const { logger } = options;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service: 'gateway' });
  });

  // Longer than the 2 s the gateway gives each service's /readyz, so that a service's own answer
  // (with the reason it is not ready) arrives before the gateway gives up on it.
  app.get('/readyz', readinessHandler(options.readiness, { timeoutMs: 2500, isDraining: options.isDraining }));

  // Request durations by route pattern (health checks are not counted).
  app.use(metrics.middleware);

  // Request id first, and never trust internal headers a client sends.
  app.use((req, res, next) => {
    const record = beginRequest(req, res, requestLog);
    res.locals.request = record;
    req.log = logger.child({ requestId: record.requestId });
    next();
  });
  // Permissive CORS on the API.
  app.use('/v1', cors);
  // The API reference: not API routes, so handled before the route matcher, without a token.
  mountApiReference(app, routes);

  // The operators' queue dashboard: Basic auth only (never an API token), before the route matcher.
  app.use(QUEUE_DASHBOARD_PATH, operatorAuth(options.queueDashboard?.credentials ?? null));
  if (options.queueDashboard) app.use(QUEUE_DASHBOARD_PATH, options.queueDashboard.router);

  if (options.console)
    app.use(
      CONSOLE_PATH,
      createConsoleRouter({
        ...options.console,
        matcher,
        forwardAs: (req, res, match, caller) => forward(req, res, match, res.locals.request as RequestRecord, caller),
      }),
    );

  app.use((req, res) => {
    const pathname = req.path;
    const lookup = matcher.lookup(req.method, pathname);
    if (lookup.kind === 'not_found') throw new ApiError('not_found', `No route for ${req.method} ${pathname}.`);
    if (lookup.kind === 'method_not_allowed') {
      // The path is the API's: counted under its route, not with the paths no route knows.
      setMetricsRoute(res, lookup.path);
      const allow = [...new Set(lookup.allowed)].join(', ');
      throw new ApiError('method_not_allowed', `${req.method} is not allowed on ${pathname}. Allowed: ${allow}.`, {
        headers: { Allow: allow },
      });
    }
    setMetricsRoute(res, lookup.match.route.path);
    forward(req, res, lookup.match, res.locals.request as RequestRecord);
  });

  app.use(errorMiddleware(logger));
  return app;
}

/**
 * Gives the request its id (header, log line, X-Request-Id), drops internal headers a client sent,
 * and logs the answer once it is sent, with the application once the token named it.
 */
/**
 * The logger of the one line per request. Its fields are fixed (request id, application, method,
 * path, status, duration) and never hold a credential, so the line skips the redaction every other
 * line goes through: a tenth of the line's cost, on every request.
 */
function requestLogger(logger: Logger): Logger {
  return logger.child({}, { redact: [] });
}

function beginRequest(req: IncomingMessage, res: ServerResponse, requestLog: Logger): RequestRecord {
  for (const name of CLIENT_FORBIDDEN_HEADERS) delete req.headers[name];
  const record: RequestRecord = { requestId: randomUUID() };
  req.headers[INTERNAL_HEADERS.requestId] = record.requestId;
  res.setHeader('X-Request-Id', record.requestId);
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const url = (req.url ?? '').split('?')[0];
    requestLog.info({ ...record, method: req.method, url, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
  });
  return record;
}

/** Any origin may call the API. */
function allowAnyOrigin(res: ServerResponse): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
}

/** CORS on the API's paths; a preflight is answered here. */
const cors: RequestHandler = (req, res, next) => {
  allowAnyOrigin(res);
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', 'GET, PUT, POST, DELETE, OPTIONS');
    res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'Authorization, Content-Type');
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
    return;
  }
  next();
};

/** GET /v1/openapi.json, and the Swagger UI page at /docs with its assets from swagger-ui-dist. */
function mountApiReference(app: Express, routes: readonly RouteDef[]): void {
  const openApiJson = serializeOpenApiDocument(buildOpenApiDocument(routes));
  app.get('/v1/openapi.json', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json').send(openApiJson);
  });
  app.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(DOCS_PAGE);
  });
  app.get('/docs/swagger-initializer.js', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('text/javascript').send(DOCS_INITIALIZER);
  });
  for (const asset of SWAGGER_UI_ASSETS)
    app.get(`/docs/${asset}`, (_req, res, next) => {
      res.sendFile(path.join(SWAGGER_UI_DIR, asset), { maxAge: '1h' }, (error) => {
        if (error) next(error);
      });
    });
}
