/**
 * The gateway's Express app: request ids, CORS, route lookup against the shared route table
 * (404 and 405 with Allow), the 10 MB body limit, token verification for the route's kind, the
 * caller's rate limit, then the proxy to the owning service with the verified caller in internal
 * headers. Also serves the API reference:
 * `GET /v1/openapi.json` and the Swagger UI page `GET /docs` with its assets from swagger-ui-dist.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  ApiError,
  buildOpenApiDocument,
  errorMiddleware,
  INTERNAL_HEADERS,
  processMetrics,
  ROUTES,
  RouteMatcher,
  serializeOpenApiDocument,
  readinessHandler,
  setMetricsRoute,
  type Logger,
  type ProcessMetrics,
  type ReadinessCheck,
  type RouteDef,
  type ServiceName,
} from '@collab/shared';
import express, { type Express, type Request, type RequestHandler } from 'express';
import { operatorAuth, QUEUE_DASHBOARD_PATH, type OperatorCredentials } from './admin/queue-dashboard.js';
import type { Authenticate } from './auth/authenticate.js';
import { refuseOversizedBody } from './limits/body-size.js';
import type { RateLimit } from './limits/rate-limit.js';

export interface GatewayAppOptions {
  logger: Logger;
  internalToken: string;
  authenticate: Authenticate;
  proxies: Record<ServiceName, RequestHandler>;
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
}

const CLIENT_FORBIDDEN_HEADERS = [
  INTERNAL_HEADERS.internalToken,
  INTERNAL_HEADERS.applicationId,
  INTERNAL_HEADERS.customerId,
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

export function createGatewayApp(options: GatewayAppOptions): Express {
  const { logger } = options;
  const routes = options.routes ?? ROUTES;
  const matcher = new RouteMatcher(routes);
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
  app.use((options.metrics ?? processMetrics()).middleware);

  // Request id first, and never trust internal headers a client sends.
  app.use(assignRequestId(logger));
  // Permissive CORS on the API.
  app.use('/v1', cors);
  // The API reference: not API routes, so handled before the route matcher, without a token.
  mountApiReference(app, routes);

  // The operators' queue dashboard: Basic auth only (never an API token), before the route matcher.
  app.use(QUEUE_DASHBOARD_PATH, operatorAuth(options.queueDashboard?.credentials ?? null));
  if (options.queueDashboard) app.use(QUEUE_DASHBOARD_PATH, options.queueDashboard.router);

  app.use(async (req: Request, res, next) => {
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
    const { route, undecodableParam } = lookup.match;
    setMetricsRoute(res, route.path);
    refuseOversizedBody(route, req.headers);
    const requestId = req.headers[INTERNAL_HEADERS.requestId] as string;
    const caller = await options.authenticate(route.auth, req.headers.authorization, requestId);
    await options.rateLimit?.(caller, res);
    // Checked where a service checks its path parameters: after the caller is known.
    if (undecodableParam !== undefined)
      throw new ApiError('invalid_field', `${undecodableParam} is not valid: its percent-encoding does not decode to UTF-8 text.`);
    delete req.headers.authorization;
    req.headers[INTERNAL_HEADERS.internalToken] = options.internalToken;
    if (caller.applicationId) {
      req.headers[INTERNAL_HEADERS.applicationId] = caller.applicationId;
      req.log = req.log.child({ applicationId: caller.applicationId });
    }
    if (caller.customerId) req.headers[INTERNAL_HEADERS.customerId] = caller.customerId;
    options.proxies[route.service](req, res, next);
  });

  app.use(errorMiddleware(logger));
  return app;
}

/** Gives the request its id (header, log lines, X-Request-Id), drops internal headers a client sent, and logs the answer. */
function assignRequestId(logger: Logger): RequestHandler {
  return (req, res, next) => {
    for (const name of CLIENT_FORBIDDEN_HEADERS) delete req.headers[name];
    const requestId = randomUUID();
    req.headers[INTERNAL_HEADERS.requestId] = requestId;
    req.log = logger.child({ requestId });
    res.setHeader('X-Request-Id', requestId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      req.log.info({ method: req.method, url: req.originalUrl.split('?')[0], status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
    });
    next();
  };
}

/** Any origin may call the API; a preflight is answered here. */
const cors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
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
