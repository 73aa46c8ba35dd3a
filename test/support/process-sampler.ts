/**
 * Figures over time of a system of real processes under load: every few seconds, each supervised
 * process's resident memory (VmRSS), event-loop lag (p99 and max of prom-client's default
 * metrics, scraped from its /metrics) and the backlog of the outboxes it relays, the test
 * process's own (it generates the load), and the load generator's counters. Recorded only, never asserted: the machine may be shared.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { residentBytes } from './proc.js';
import type { ProcessSystem } from './process-system.js';

/** The name of the test process (the load generator) among the sampled processes. */
export const LOAD_GENERATOR = 'load generator';

export interface ProcessSample {
  name: string;
  /** null while the process is missing (ended, not yet restarted). */
  pid: number | null;
  rssBytes: number | null;
  /** Event-loop lag since the previous sample; null when /metrics did not answer. */
  lagP99Seconds: number | null;
  lagMaxSeconds: number | null;
  /** Entries waiting in each outbox the process relays, by schema (none: it relays none). */
  outboxBacklog: Record<string, number>;
}

export interface Sample {
  /** Milliseconds since sampling started. */
  atMs: number;
  /** The load generator's counters at that moment (cumulative). */
  counters: LoadCounters;
  processes: ProcessSample[];
}

export interface LoadCounters {
  requests: number;
  errors: number;
  /** Requests whose latency is recorded so far: latencies of an interval are those in between. */
  latencies: number;
}

/** Reads one gauge without labels from a Prometheus text exposition. */
function gauge(text: string, name: string): number | null {
  const value = new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  return value === undefined ? null : Number(value);
}

/** `outbox_entries_pending` by its `schema` label. */
function outboxBacklog(text: string): Record<string, number> {
  const backlog: Record<string, number> = {};
  for (const [, schema, value] of text.matchAll(/^outbox_entries_pending\{schema="([^"]+)"\} (\S+)$/gm)) backlog[schema] = Number(value);
  return backlog;
}

interface Scraped {
  lag: { p99: number | null; max: number | null };
  outboxBacklog: Record<string, number>;
}

/**
 * The lag gauges since the previous scrape: prom-client's collect reads its event-loop delay
 * histogram and resets it, so each scrape covers the time since the one before (only this
 * sampler scrapes a test system's /metrics ports). The outbox backlog is read at scrape time.
 */
async function scrape(metricsUrl: string | null): Promise<Scraped> {
  const nothing: Scraped = { lag: { p99: null, max: null }, outboxBacklog: {} };
  if (!metricsUrl) return nothing;
  try {
    const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) });
    const text = await response.text();
    if (response.status !== 200) return nothing;
    return {
      lag: { p99: gauge(text, 'nodejs_eventloop_lag_p99_seconds'), max: gauge(text, 'nodejs_eventloop_lag_max_seconds') },
      outboxBacklog: outboxBacklog(text),
    };
  } catch {
    return nothing;
  }
}

/**
 * Samples `system` every `intervalMs` (and once at the start and at stop) until stop(), which
 * resolves with every sample in order. `counters` reads the load generator's tally.
 */
export function startSampling(system: ProcessSystem, intervalMs: number, counters: () => LoadCounters): { stop(): Promise<Sample[]> } {
  const started = Date.now();
  const samples: Sample[] = [];
  const ownLag = monitorEventLoopDelay({ resolution: 10 });
  ownLag.enable();
  let names: string[] = [];

  async function sample(): Promise<void> {
    // Taken as the sample starts: scraping every process can take a while on a busy machine.
    const atMs = Date.now() - started;
    const load = { ...counters() };
    const running = system.processes();
    // Every process once seen keeps its column, also while it is missing.
    for (const { name } of running) if (!names.includes(name)) names = [...names, name];
    const processes = await Promise.all(
      names.map(async (name): Promise<ProcessSample> => {
        const found = running.find((entry) => entry.name === name);
        if (!found) return { name, pid: null, rssBytes: null, lagP99Seconds: null, lagMaxSeconds: null, outboxBacklog: {} };
        const scraped = await scrape(found.metricsUrl);
        return {
          name,
          pid: found.pid,
          rssBytes: residentBytes(found.pid),
          lagP99Seconds: scraped.lag.p99,
          lagMaxSeconds: scraped.lag.max,
          outboxBacklog: scraped.outboxBacklog,
        };
      }),
    );
    processes.push({
      name: LOAD_GENERATOR,
      pid: process.pid,
      rssBytes: process.memoryUsage.rss(),
      lagP99Seconds: ownLag.percentile(99) / 1e9,
      lagMaxSeconds: ownLag.max / 1e9,
      outboxBacklog: {},
    });
    ownLag.reset();
    samples.push({ atMs, counters: load, processes });
  }

  let stopping = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    await sample();
    // On a fixed cadence (started + n × interval), so that a slow sample does not shift the rest;
    // a slot a sample overran is skipped.
    while (!stopping) {
      const next = started + (Math.floor((Date.now() - started) / intervalMs) + 1) * intervalMs;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, next - Date.now());
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      await sample();
    }
  })();

  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      ownLag.disable();
      return samples;
    },
  };
}
