/**
 * The soak's figures as markdown for RELIABILITY.md: the run, its accounting, and per interval
 * the load's requests/s, errors and latency, the outboxes' backlog, and each process's resident
 * memory and event-loop lag. Written between the `<!-- soak:begin -->` and `<!-- soak:end -->` markers, so the rest of
 * the file stays as it is.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { LOAD_GENERATOR, type Sample } from '../support/process-sampler.js';

export const BEGIN_MARKER = '<!-- soak:begin -->';
export const END_MARKER = '<!-- soak:end -->';

export interface SoakRun {
  startedAt: Date;
  /** The machine's 1-minute load average when the load started (other work on a shared machine). */
  loadAverageAtStart: number;
  figures: {
    seconds: number;
    clients: number;
    requests: number;
    requestsPerSecond: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    errors: number;
    byOperation: Record<string, number>;
  };
  /** Per application, what was reconciled; or why the accounting failed. */
  accounting: { exact: true; reconciled: Record<string, number>[] } | { exact: false; failure: string };
  samples: Sample[];
  /** How often the samples were taken. */
  sampleIntervalMs: number;
  /** Every request's latency in the order recorded (Sample.counters.latencies indexes it). */
  latenciesMs: number[];
  /** The supervisor's lines about processes that ended while running and were restarted. */
  exits: string[];
  /** Settings of the run worth reading beside the figures (e.g. DB_POOL_SIZE when set). */
  settings: Record<string, string>;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
const ms = (value: number | null) => (value === null ? '–' : value.toFixed(1));
const secondsToMs = (value: number | null) => (value === null ? null : value * 1000);
const mb = (bytes: number | null) => (bytes === null ? '–' : (bytes / 2 ** 20).toFixed(0));
const clock = (atMs: number) => {
  const total = Math.round(atMs / 1000);
  return `${Math.floor(total / 60)}:${String(total % 60).padStart(2, '0')}`;
};
const max = (values: (number | null)[]) => {
  const present = values.filter((value): value is number => value !== null);
  return present.length === 0 ? null : Math.max(...present);
};
const table = (header: string[], rows: string[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');

/**
 * Report intervals of about a fifteenth of the run, whole multiples of the sampling interval:
 * a minute for the 15-minute soak.
 */
function reportIntervalMs(samples: Sample[], sampleIntervalMs: number): number {
  const last = samples[samples.length - 1].atMs;
  return Math.max(sampleIntervalMs, Math.ceil(last / 15 / sampleIntervalMs) * sampleIntervalMs);
}

/**
 * Samples grouped by report interval: each group ends with the last sample taken in it, and
 * starts after the one that ended the group before (`from`, whose counters it counts from).
 */
function intervals(samples: Sample[], sampleIntervalMs: number): { from: Sample; samples: Sample[] }[] {
  const size = reportIntervalMs(samples, sampleIntervalMs);
  const groups: { from: Sample; samples: Sample[] }[] = [];
  let from = samples[0];
  let current: Sample[] = [];
  for (const sample of samples.slice(1)) {
    current.push(sample);
    // Closed at the first sample at or past the interval's end (a sample may start a little late).
    if (sample.atMs >= (groups.length + 1) * size - sampleIntervalMs / 2) {
      groups.push({ from, samples: current });
      from = sample;
      current = [];
    }
  }
  // The sample taken when the load stopped: part of the last interval unless well past it.
  const last = groups[groups.length - 1];
  if (current.length > 0 && last && current[current.length - 1].atMs - from.atMs < size / 2) last.samples.push(...current);
  else if (current.length > 0) groups.push({ from, samples: current });
  return groups;
}

/**
 * Entries waiting in each outbox when the sample was taken, by schema: what the relays still had
 * to hand over (a backlog that keeps growing means a relay slower than the load).
 */
function outboxBacklog(sample: Sample): string {
  const bySchema = new Map<string, number>();
  for (const { outboxBacklog } of sample.processes)
    for (const [schema, entries] of Object.entries(outboxBacklog)) bySchema.set(schema, Math.max(entries, bySchema.get(schema) ?? 0));
  return bySchema.size === 0 ? '–' : [...bySchema].map(([schema, entries]) => `${schema} ${entries}`).join(', ');
}

export function soakReport(run: SoakRun): string {
  const { figures, samples } = run;
  const names = samples[samples.length - 1].processes.map((process) => process.name);
  const groups = intervals(samples, run.sampleIntervalMs);
  const sampleSeconds = run.sampleIntervalMs / 1000;

  const lines: string[] = [];
  lines.push(
    `Last soak: ${run.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${figures.seconds} s, ${figures.clients} clients, ` +
      `the processes of \`npm start\` (scripts/start.mjs) on ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.versions.node}; ` +
      `1-minute load average ${run.loadAverageAtStart.toFixed(1)} at the start and ${loadavg()[0].toFixed(1)} at the end` +
      (Object.keys(run.settings).length > 0 ? `; ${Object.entries(run.settings).map(([name, value]) => `${name}=${value}`).join(', ')}` : '') +
      '.',
    '',
  );
  const accounting = run.accounting.exact
    ? run.accounting.reconciled
        .map((app, index) => `application ${'AB'[index] ?? index + 1}: ${app.users} users, ${app.threads} threads, ${app.messages} messages, ${app.notifications} notifications`)
        .join('; ') + ': all readable, every count exact'
    : `**failed**: ${run.accounting.failure}`;
  lines.push(
    table(
      ['Figure', 'Value'],
      [
        ['Requests', `${figures.requests.toLocaleString('en')} (${figures.requestsPerSecond} req/s)`],
        ['Latency', `p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, max ${figures.maxMs} ms`],
        ['Errors', String(figures.errors)],
        ['By operation', Object.entries(figures.byOperation).sort(([, a], [, b]) => b - a).map(([name, count]) => `${name} ${count.toLocaleString('en')}`).join('; ')],
        ['Accounting', accounting],
        ['Process restarts', run.exits.length === 0 ? 'none' : run.exits.map((line) => `\`${line}\``).join('; ')],
      ],
    ),
    '',
  );

  lines.push("Load per interval, and the entries waiting in each outbox at the interval's end:", '');
  lines.push(
    table(
      ['Until', 'req/s', 'errors', 'p50 ms', 'p99 ms', 'outbox backlog'],
      groups.map(({ from, samples: group }) => {
        const to = group[group.length - 1];
        const seconds = (to.atMs - from.atMs) / 1000;
        const latencies = run.latenciesMs.slice(from.counters.latencies, to.counters.latencies).sort((a, b) => a - b);
        return [
          clock(to.atMs),
          seconds > 0 ? ((to.counters.requests - from.counters.requests) / seconds).toFixed(0) : '–',
          String(to.counters.errors - from.counters.errors),
          ms(percentile(latencies, 50)),
          ms(percentile(latencies, 99)),
          outboxBacklog(to),
        ];
      }),
    ),
    '',
  );

  lines.push(
    `Per process: resident memory (VmRSS) at the start, its peak and at the end; event-loop lag, the worst p99 and max of any ${sampleSeconds} s sample ` +
      `(prom-client's \`nodejs_eventloop_lag_p99_seconds\` and \`_max_seconds\` from each process's \`/metrics\`; for the ${LOAD_GENERATOR}, the test process, its own histogram).`,
    '',
  );
  lines.push(
    table(
      ['Process', 'RSS start MB', 'RSS peak MB', 'RSS end MB', 'lag p99 worst ms', 'lag max worst ms'],
      names.map((name) => {
        const series = samples.map((sample) => sample.processes.find((process) => process.name === name));
        const rss = series.map((entry) => entry?.rssBytes ?? null);
        return [
          name,
          mb(rss.find((value) => value !== null) ?? null),
          mb(max(rss)),
          mb(rss[rss.length - 1]),
          // The first sample's lag covers the boot, before the load: left out.
          ms(secondsToMs(max(series.slice(1).map((entry) => entry?.lagP99Seconds ?? null)))),
          ms(secondsToMs(max(series.slice(1).map((entry) => entry?.lagMaxSeconds ?? null)))),
        ];
      }),
    ),
    '',
  );

  for (const name of names) {
    lines.push(`<details><summary>${name} over time</summary>`, '');
    lines.push(
      table(
        ['Until', 'RSS MB', 'lag p99 ms', 'lag max ms'],
        groups.map(({ samples: group }) => {
          const entries = group.map((sample) => sample.processes.find((process) => process.name === name));
          return [
            clock(group[group.length - 1].atMs),
            mb(entries[entries.length - 1]?.rssBytes ?? null),
            ms(secondsToMs(max(entries.map((entry) => entry?.lagP99Seconds ?? null)))),
            ms(secondsToMs(max(entries.map((entry) => entry?.lagMaxSeconds ?? null)))),
          ];
        }),
      ),
      '',
      '</details>',
      '',
    );
  }
  return lines.join('\n').trimEnd();
}

/**
 * Where the `<!-- <section>:begin -->` … `<!-- <section>:end -->` markers of `file` stand (the
 * soak's unless told); throws when it lacks them (checked before a long run, too).
 */
export function markersIn(file: string, section = 'soak'): { text: string; begin: number; end: number; beginMarker: string } {
  const beginMarker = section === 'soak' ? BEGIN_MARKER : `<!-- ${section}:begin -->`;
  const endMarker = section === 'soak' ? END_MARKER : `<!-- ${section}:end -->`;
  const text = readFileSync(file, 'utf8');
  const begin = text.indexOf(beginMarker);
  const end = text.indexOf(endMarker);
  if (begin < 0 || end < begin) throw new Error(`${file} has no ${beginMarker} … ${endMarker} section to write the ${section} figures into`);
  return { text, begin, end, beginMarker };
}

/** Replaces what stands between the markers of `section` in `file` with `content`; the rest stays. */
export function writeBetweenMarkers(file: string, content: string, section = 'soak'): void {
  const { text, begin, end, beginMarker } = markersIn(file, section);
  writeFileSync(file, `${text.slice(0, begin + beginMarker.length)}\n${content}\n${text.slice(end)}`);
}
