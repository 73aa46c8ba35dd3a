/**
 * The chaos run as markdown for RELIABILITY.md (between `<!-- chaos:begin -->` and
 * `<!-- chaos:end -->`): how it ran and on what machine, each fault with its time to ready, the
 * answers inside and outside the faults, and the reconciliation's counts.
 */
import { cpus, loadavg, totalmem } from 'node:os';
import { READY_TIMEOUT_MS, type FaultRecord } from './faults.js';
import type { Answer } from './load.js';
import type { Check } from './reconcile.js';

export const SECTION = 'chaos';

export interface ChaosRun {
  command: string;
  startedAt: Date;
  seconds: number;
  clients: number;
  loadAverageAtStart: number;
  versions: Record<string, string>;
  faults: FaultRecord[];
  answers: Answer[];
  checks: Check[];
}

const table = (header: string[], rows: string[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
const seconds = (ms: number) => (ms / 1000).toFixed(1);

/** A 5xx or no answer during a fault or before the system was ready after it counts against the fault. */
function inFault(answer: Answer, faults: FaultRecord[]): FaultRecord | undefined {
  return faults.find((fault) => answer.at >= fault.startedAt && answer.at <= fault.endedAt + (fault.readyAfterMs ?? READY_TIMEOUT_MS));
}

export const isFailure = (answer: Answer) => answer.status === 0 || answer.status >= 500;

export function chaosReport(run: ChaosRun): string {
  const exact = run.checks.every((check) => check.failures.length === 0);
  const allReady = run.faults.every((fault) => fault.readyAfterMs !== null);
  const failuresBy = new Map<FaultRecord | undefined, number>();
  for (const answer of run.answers.filter(isFailure)) {
    const fault = inFault(answer, run.faults);
    failuresBy.set(fault, (failuresBy.get(fault) ?? 0) + 1);
  }
  const refused = run.answers.filter((answer) => answer.status >= 400 && answer.status < 500);
  const byOperation = new Map<string, { total: number; ok: number }>();
  for (const answer of run.answers) {
    const entry = byOperation.get(answer.operation) ?? { total: 0, ok: 0 };
    entry.total++;
    if (answer.status >= 200 && answer.status < 300) entry.ok++;
    byOperation.set(answer.operation, entry);
  }
  const first = run.faults[0]?.startedAt ?? run.startedAt.getTime();
  const lines = [
    `Command: \`${run.command}\`, ${run.startedAt.toISOString().replace(/\.\d+Z$/, 'Z')}, ${run.seconds} s of load, ` +
      `${run.clients} clients. Machine: ${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB, ${Object.entries(run.versions).map(([name, version]) => `${name} ${version}`).join(', ')}; ` +
      `load average ${run.loadAverageAtStart.toFixed(1)} at the start and ${loadavg()[0].toFixed(1)} at the end, ` +
      'from other work running on the same machine at the same time: the times to ready include that contention.',
    '',
    `Reconciliation: **${exact ? 'exact' : 'FAILED'}**; ready again after every fault: **${allReady ? 'yes' : 'NO'}**.`,
    '',
    table(
      ['#', 'Fault', 'At', 'Lasted', 'Ready after', '5xx or no answer', 'Processes restarted'],
      run.faults.map((fault, index) => [
        String(index + 1),
        fault.name,
        `+${seconds(fault.startedAt - first)} s`,
        `${seconds(fault.endedAt - fault.startedAt)} s`,
        fault.readyAfterMs === null ? `**not within ${READY_TIMEOUT_MS / 1000} s**: ${fault.notReady}` : `${seconds(fault.readyAfterMs)} s`,
        String(failuresBy.get(fault) ?? 0),
        fault.detail.replace(/^restarted: /, ''),
      ]),
    ),
    '',
    `Requests: ${run.answers.length} (${[...byOperation].map(([operation, { total, ok }]) => `${operation} ${ok}/${total} acknowledged`).join(', ')}); ` +
      `5xx or no answer outside the faults: ${failuresBy.get(undefined) ?? 0}; 4xx: ${refused.length}` +
      `${refused.length > 0 ? ` (${[...new Set(refused.map((answer) => `${answer.operation} ${answer.status}`))].join(', ')})` : ''}.`,
    '',
    table(
      ['Check', 'Compared', 'Differences'],
      run.checks.map((check) => [
        check.name,
        Object.entries(check.counts).map(([name, count]) => `${name} ${count}`).join(', '),
        check.failures.length === 0 ? '0' : check.failures.map((failure) => failure.replace(/\|/g, '\\|')).join('<br>'),
      ]),
    ),
  ];
  return lines.join('\n');
}
