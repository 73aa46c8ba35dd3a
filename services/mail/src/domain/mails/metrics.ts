/** Mail metrics of a mail worker, in the process's registry (served on METRICS_PORT). */
import { processMetrics } from '@collab/shared';
import { Counter } from 'prom-client';

let metrics: { sent: () => void; skipped: (reason: string) => void; failed: () => void } | null = null;

export function mailMetrics() {
  if (metrics) return metrics;
  const registry = processMetrics().registry;
  const sent = new Counter({ name: 'mails_sent_total', help: 'Mails the SMTP server accepted', registers: [registry] });
  const skipped = new Counter({
    name: 'mails_skipped_total',
    help: 'Mails not sent, by the gate that stopped them (preference, application switch, unsubscribed, seen …)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const failed = new Counter({ name: 'mails_failed_total', help: 'SMTP attempts that failed (each is retried for a day)', registers: [registry] });
  metrics = { sent: () => sent.inc(), skipped: (reason) => skipped.inc({ reason }), failed: () => failed.inc() };
  return metrics;
}
