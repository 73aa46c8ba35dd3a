/**
 * Scenario 5, memory: resident memory (VmRSS from /proc/<pid>/status) of every process the
 * harness started, sampled while idle after the start and then through all the load scenarios.
 */
import { readFileSync } from 'node:fs';
import { fmt, type Section } from '../report.js';
import type { BenchProcess } from '../system.js';

/** Issue 30's memory target: under 150 MB with a margin of 15 MB or more, so at most 135 MB. */
const LIMIT_BYTES = 150 * 1024 * 1024;
const MARGIN_BYTES = 15 * 1024 * 1024;
const TARGET_BYTES = LIMIT_BYTES - MARGIN_BYTES;
const INTERVAL_MS = 250;

export function residentBytes(pid: number): number | null {
  try {
    const kilobytes = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kilobytes === undefined ? null : Number(kilobytes) * 1024;
  } catch {
    // The process is gone.
    return null;
  }
}

/** A process's largest sample, and the scenario running then (none while idle). */
interface Peak {
  bytes: number;
  scenario: string | null;
}

/**
 * Scenarios judged by a memory target of their own, in their section: the import's processes
 * hold a dump's batches (< 250 MB). Their peaks are listed here but not held to TARGET_BYTES,
 * which is the target under the API's load.
 */
const OWN_TARGET = new Set(['import']);

export class MemorySampler {
  private readonly peaks = { idle: new Map<string, Peak>(), load: new Map<string, Peak>(), ownTarget: new Map<string, Peak>() };
  private readonly http = new Map<string, boolean>();
  private phase: 'idle' | 'load' | 'ownTarget' = 'idle';
  private scenario: string | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly processes: () => BenchProcess[]) {
    this.timer = setInterval(() => this.sample(), INTERVAL_MS);
    this.sample();
  }

  private sample(): void {
    for (const { name, pid, http } of this.processes()) {
      const bytes = residentBytes(pid);
      if (bytes === null) continue;
      this.http.set(name, http);
      const peaks = this.peaks[this.phase];
      if (bytes > (peaks.get(name)?.bytes ?? 0)) peaks.set(name, { bytes, scenario: this.scenario });
    }
  }

  /** From now on, samples count as "under load" of this scenario, which the report names beside a peak. */
  scenarioStarts(scenario: string): void {
    this.sample();
    this.phase = OWN_TARGET.has(scenario) ? 'ownTarget' : 'load';
    this.scenario = scenario;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  section(): Section {
    const names = [...this.http.keys()];
    return {
      title: '5. Memory',
      method:
        `Resident memory (VmRSS) of each process, sampled every ${INTERVAL_MS} ms: the largest value while idle after the start, ` +
        `and the largest under the load of the scenarios (including the scale-out run's extra processes), with the scenario ` +
        `that was running then. Scenarios with a memory target of their own (${[...OWN_TARGET].join(', ')}) are listed in the ` +
        `notes, not held to this one.`,
      rows: names.map((name) => {
        const idle = this.peaks.idle.get(name)?.bytes;
        const peak = this.peaks.load.get(name);
        const load = peak?.bytes ?? idle ?? 0;
        const http = this.http.get(name)!;
        return {
          figure: `${name}${http ? '' : ' (no HTTP API)'}`,
          value: `${fmt.mb(load)} under load${peak?.scenario ? ` (${peak.scenario})` : ''}`,
          baseline: idle === undefined ? 'not running when idle' : `${fmt.mb(idle)} idle`,
          ratio: idle === undefined ? '—' : fmt.ratio(load / idle),
          target: http ? `≤ ${fmt.mb(TARGET_BYTES)} (< ${fmt.mb(LIMIT_BYTES)} with ${fmt.mb(MARGIN_BYTES)} to spare)` : '—',
          met: http ? load <= TARGET_BYTES : null,
        };
      }),
      notes:
        names.length === 0
          ? ['Not measured: a running system (BENCH_URL) runs its processes elsewhere.']
          : [...this.peaks.ownTarget].map(([name, peak]) => `${name}: ${fmt.mb(peak.bytes)} during ${peak.scenario} (its own target, in its section).`),
    };
  }
}
