/**
 * The gateway's own counters, in the process's registry beside the request durations: requests a
 * service failed (unreachable, garbled answer) or did not answer in time, by service, and requests
 * refused by the rate limit. Every series starts at 0, so a dashboard's rate() has a baseline
 * before the first failure.
 */
import type { ProcessMetrics, ServiceName } from '@collab/shared';
import { Counter } from 'prom-client';

/** How a service failed a proxied request: the error code the client got. */
export type UpstreamFailure = 'service_unavailable' | 'bad_gateway' | 'gateway_timeout';

export interface GatewayMetrics {
  upstreamFailed(service: ServiceName, failure: UpstreamFailure): void;
  rateLimited(): void;
}

const SERVICES: ServiceName[] = ['identity', 'conversation', 'notification', 'webhooks'];
const ERROR_CODES = ['service_unavailable', 'bad_gateway'] as const;

/** One set of counters per registry (several gateways in one test process share the process's registry). */
const byRegistry = new WeakMap<ProcessMetrics, GatewayMetrics>();

export function gatewayMetrics(metrics: ProcessMetrics): GatewayMetrics {
  const existing = byRegistry.get(metrics);
  if (existing) return existing;
  const errors = new Counter({
    name: 'gateway_upstream_errors_total',
    help: 'Proxied requests a service failed: unreachable (service_unavailable, 503) or an invalid answer (bad_gateway, 502)',
    labelNames: ['service', 'code'],
    registers: [metrics.registry],
  });
  const timeouts = new Counter({
    name: 'gateway_upstream_timeouts_total',
    help: 'Proxied requests a service did not answer within UPSTREAM_TIMEOUT_MS (gateway_timeout, 504)',
    labelNames: ['service'],
    registers: [metrics.registry],
  });
  const limited = new Counter({
    name: 'gateway_rate_limited_requests_total',
    help: 'Requests refused with 429 rate_limited',
    registers: [metrics.registry],
  });
  for (const service of SERVICES) {
    timeouts.inc({ service }, 0);
    for (const code of ERROR_CODES) errors.inc({ service, code }, 0);
  }
  const created: GatewayMetrics = {
    upstreamFailed(service, failure) {
      if (failure === 'gateway_timeout') timeouts.inc({ service });
      else errors.inc({ service, code: failure });
    },
    rateLimited: () => limited.inc(),
  };
  byRegistry.set(metrics, created);
  return created;
}
