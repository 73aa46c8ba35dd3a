/**
 * Scenario 5, memory: resident memory (VmRSS from /proc/<pid>/status) of every process the
 * harness started, sampled while idle after the start and then through all the load scenarios.
 */
import { readFileSync } from 'node:fs';
import { fmt, type Section } from '../report.js';
import type { BenchProcess } from '../system.js';

const TARGET_BYTES = 150 * 1024 * 1024;
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

export class MemorySampler {
  private readonly peaks = { idle: new Map<string, number>(), load: new Map<string, number>() };
  private readonly http = new Map<string, boolean>();
  private phase: 'idle' | 'load' = 'idle';
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
      peaks.set(name, Math.max(bytes, peaks.get(name) ?? 0));
    }
  }

  /** From now on, samples count as "under load". */
  loadStarts(): void {
    this.sample();
    this.phase = 'load';
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
        `and the largest under the load of the scenarios (including the scale-out run's extra processes).`,
      rows: names.map((name) => {
        const idle = this.peaks.idle.get(name);
        const load = this.peaks.load.get(name) ?? idle ?? 0;
        const http = this.http.get(name)!;
        return {
          figure: `${name}${http ? '' : ' (no HTTP API)'}`,
          value: `${fmt.mb(load)} under load`,
          baseline: idle === undefined ? 'not running when idle' : `${fmt.mb(idle)} idle`,
          ratio: idle === undefined ? '—' : fmt.ratio(load / idle),
          target: http ? `< ${fmt.mb(TARGET_BYTES)}` : '—',
          met: http ? load < TARGET_BYTES : null,
        };
      }),
      notes: names.length === 0 ? ['Not measured: a running system (BENCH_URL) runs its processes elsewhere.'] : [],
    };
  }
}
