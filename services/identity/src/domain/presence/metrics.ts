/** Presence metrics of the identity API, in the process's registry (served on METRICS_PORT). */
import { processMetrics } from '@collab/shared';
import { Counter } from 'prom-client';

let counter: Counter<'kind'> | null = null;

/** Counts one accepted presence update, by kind: `ephemeral`, `absent` or `durable`. */
export function countPresenceUpdate(kind: 'ephemeral' | 'absent' | 'durable'): void {
  counter ??= new Counter({
    name: 'presence_updates_total',
    help: 'Presence updates accepted by PUT /v1/users/<ID>/presence, by kind (ephemeral, absent, durable)',
    labelNames: ['kind'],
    registers: [processMetrics().registry],
  });
  counter.inc({ kind });
}
