/**
 * Forwarding to the owning service with http-proxy-middleware over keep-alive connections.
 * A dead service answers 503, a garbled answer 502, a slow one 504, always in the error envelope.
 */
import http from 'node:http';
import { ApiError, unavailable, writeApiError, type Logger, type ServiceName } from '@collab/shared';
import { createProxyMiddleware, debugProxyErrorsPlugin, proxyEventsPlugin } from 'http-proxy-middleware';
import type { Forward } from './app.js';
import type { GatewayMetrics, UpstreamFailure } from './metrics.js';

type ProxiedRequest = http.IncomingMessage & { upstreamTimedOut?: boolean };

const CONNECT_FAILURES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ECONNRESET']);

function upstreamError(error: NodeJS.ErrnoException, timedOut: boolean, service: string): ApiError {
  if (timedOut) return new ApiError('gateway_timeout', `The ${service} service did not answer in time.`);
  if (error.code && CONNECT_FAILURES.has(error.code))
    return unavailable(`The ${service} service is unavailable. Try again.`);
  return new ApiError('bad_gateway', `The ${service} service answered with an invalid response.`);
}

export function createServiceProxies(options: {
  targets: Record<ServiceName, string>;
  timeoutMs: number;
  logger: Logger;
  metrics: GatewayMetrics;
}): Record<ServiceName, Forward> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 10_000 });
  const proxies = {} as Record<ServiceName, Forward>;
  for (const [service, target] of Object.entries(options.targets) as [ServiceName, string][]) {
    proxies[service] = createProxyMiddleware<http.IncomingMessage, http.ServerResponse>({
      target,
      agent,
      xfwd: true,
      proxyTimeout: options.timeoutMs,
      // The default plugins but the logger, which builds a URL object per request for a line it
      // then writes to a logger that drops it (the gateway writes its own line per request).
      ejectPlugins: true,
      plugins: [debugProxyErrorsPlugin, proxyEventsPlugin],
      on: {
        proxyReq: (proxyReq, req) => {
          proxyReq.setHeader('connection', 'keep-alive');
          // The proxy aborts the upstream request on `proxyTimeout`; remember that it was a
          // timeout (504), which the resulting "socket hang up" error no longer tells.
          proxyReq.once('timeout', () => {
            (req as ProxiedRequest).upstreamTimedOut = true;
          });
          // A service that refuses a body for its size answers before it has read it. Node's client
          // sends no more of a request body once the response is complete, so the gateway drops the
          // upstream request there; its server reads and throws away the rest (createHttpServer).
          proxyReq.once('response', (proxyRes) =>
            proxyRes.once('end', () => {
              if (!req.complete) proxyReq.destroy();
            }),
          );
        },
        // Connection is hop-by-hop (RFC 9110 §7.6.1): the upstream's keep-alive must not keep the
        // client's connection open when the client asked to close it (RFC 9112 §9.6). Node decided
        // from the request whether to keep it (`shouldKeepAlive`); a `connection` header copied
        // from upstream would overrule that decision.
        proxyRes: (proxyRes, _req, res) => {
          if (!res.shouldKeepAlive) proxyRes.headers.connection = 'close';
        },
        error: (error, req, res) => {
          const timedOut = (req as ProxiedRequest).upstreamTimedOut === true;
          const apiError = upstreamError(error as NodeJS.ErrnoException, timedOut, service);
          options.logger.warn({ err: (error as Error).message, service, code: apiError.code }, 'upstream failure');
          options.metrics.upstreamFailed(service, apiError.code as UpstreamFailure);
          if (!('writeHead' in res)) {
            res.destroy();
            return;
          }
          const response = res as http.ServerResponse;
          if (response.headersSent) {
            response.destroy();
            return;
          }
          writeApiError(response, apiError);
        },
      },
    });
  }
  return proxies;
}
