/** Link-preview metrics of a conversation worker, in the process's registry (served on METRICS_PORT). */
import { processMetrics } from '@collab/shared';
import { Counter } from 'prom-client';

let metrics: { fetched: (outcome: string) => void; cacheHit: () => void } | null = null;

export function linkPreviewMetrics() {
  if (metrics) return metrics;
  const registry = processMetrics().registry;
  const fetches = new Counter({
    name: 'link_preview_fetches_total',
    help: 'Pages fetched for link previews, by outcome (preview, http_error, timeout, blocked_address, body_too_large, unsupported_content_type, too_many_redirects, network, invalid_url, unsupported_scheme)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const cacheHits = new Counter({
    name: 'link_preview_cache_hits_total',
    help: 'Link-preview pages answered from the page cache (an earlier fetch, successful or not) instead of being fetched',
    registers: [registry],
  });
  metrics = {
    fetched: (outcome) => fetches.inc({ outcome }),
    cacheHit: () => cacheHits.inc(),
  };
  return metrics;
}
