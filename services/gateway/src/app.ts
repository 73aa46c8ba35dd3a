/**
 * The gateway's Express app: request ids, CORS, route lookup against the shared route table
 * (404 and 405 with Allow), token verification for the route's kind, then the proxy to the
 * owning service with the verified caller in internal headers.
 */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  errorMiddleware,
  INTERNAL_HEADERS,
  ROUTES,
  RouteMatcher,
  withTimeout,
  type Logger,
  type RouteDef,
  type ServiceName,
} from '@collab/shared';
import express, { type Express, type Request, type RequestHandler } from 'express';
import type { Authenticate } from './auth/authenticate.js';

export interface GatewayAppOptions {
  logger: Logger;
  internalToken: string;
  authenticate: Authenticate;
  proxies: Record<ServiceName, RequestHandler>;
  readiness: { name: string; check: () => Promise<unknown> }[];
  isDraining: () => boolean;
  routes?: readonly RouteDef[];
}

const CLIENT_FORBIDDEN_HEADERS = [
  INTERNAL_HEADERS.internalToken,
  INTERNAL_HEADERS.applicationId,
  INTERNAL_HEADERS.customerId,
  INTERNAL_HEADERS.requestId,
];

export function createGatewayApp(options: GatewayAppOptions): Express {
  const { logger } = options;
  const matcher = new RouteMatcher(options.routes ?? ROUTES);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service: 'gateway' });
  });

  app.get('/readyz', async (_req, res) => {
    if (options.isDraining()) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    const results = await Promise.all(
      options.readiness.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), 2500);
          return [name, 'ok'] as const;
        } catch (error) {
          return [name, (error as Error).message || 'unavailable'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  });

  // Request id first, and never trust internal headers a client sends.
  app.use((req, res, next) => {
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
  });

  // Permissive CORS on the API (behavior.md §1).
  app.use('/v1', (req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'GET, PUT, POST, DELETE, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'Authorization, Content-Type');
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  });

  app.use(async (req: Request, res, next) => {
    const pathname = req.path;
    const lookup = matcher.lookup(req.method, pathname);
    if (lookup.kind === 'not_found') throw new ApiError('not_found', `No route for ${req.method} ${pathname}.`);
    if (lookup.kind === 'method_not_allowed') {
      const allow = [...new Set(lookup.allowed)].join(', ');
      throw new ApiError('method_not_allowed', `${req.method} is not allowed on ${pathname}. Allowed: ${allow}.`, {
        headers: { Allow: allow },
      });
    }
    const { route } = lookup.match;
    const requestId = req.headers[INTERNAL_HEADERS.requestId] as string;
    const caller = await options.authenticate(route.auth, req.headers.authorization, requestId);
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
