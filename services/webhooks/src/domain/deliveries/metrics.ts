/** Delivery metrics of a webhooks worker, in the process's registry (served on METRICS_PORT). */
import { processMetrics } from '@collab/shared';
import { Counter, Histogram } from 'prom-client';

let metrics: { observe: (type: string, outcome: string, seconds: number) => void } | null = null;

export function webhookMetrics() {
  if (metrics) return metrics;
  const registry = processMetrics().registry;
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by event type and outcome (succeeded, retrying, failed)',
    labelNames: ['type', 'outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'Time one webhook delivery attempt took, until the receiver answered or the attempt failed',
    labelNames: ['type'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  metrics = {
    observe(type, outcome, seconds) {
      deliveries.inc({ type, outcome });
      duration.observe({ type }, seconds);
    },
  };
  return metrics;
}
