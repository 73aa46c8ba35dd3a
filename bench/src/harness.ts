/** What every scenario gets: the system, the run's settings, and the setup steps they share. */
import { readFileSync } from 'node:fs';
import { createApplication, messageBody, type Application } from './api.js';
import { describeLoad, httpLoad, sqlLoad, type HttpLoad, type LoadStats } from './load.js';
import type { Section } from './report.js';
import type { System } from './system.js';

export interface Harness {
  system: System;
  /** Length of one measurement (BENCH_SECONDS). */
  seconds: number;
  /** Load before each measurement, not counted: JIT, pools and caches warm up. */
  warmupSeconds: number;
  /** Concurrency of the message scenarios (BENCH_CONNECTIONS, 50 by the issue). */
  connections: number;
  /** Extra material for the end of the report (query plans, profiles). */
  appendix: string[];
  log(message: string): void;
}

export interface Scenario {
  key: string;
  run(harness: Harness): Promise<Section>;
}

export type Measured = LoadStats & { /** Where the CPU went meanwhile (null for a running system). */ cpu: CpuShares | null };

/** Warms up with the same load, then measures it. */
export async function measure(harness: Harness, label: string, load: Omit<HttpLoad, 'seconds'>): Promise<Measured> {
  await httpLoad({ ...load, seconds: harness.warmupSeconds });
  return report(harness, label, await withCpuShares(harness, () => httpLoad({ ...load, seconds: harness.seconds })));
}

/** The raw-SQL counterpart of `measure`: `operation` in `connections` concurrent loops. */
export async function measureSql(
  harness: Harness,
  label: string,
  connections: number,
  operation: (loop: number) => Promise<void>,
): Promise<Measured> {
  await sqlLoad({ connections, seconds: harness.warmupSeconds, operation });
  return report(harness, label, await withCpuShares(harness, () => sqlLoad({ connections, seconds: harness.seconds, operation })));
}

function report(harness: Harness, label: string, { result, cpu }: { result: LoadStats; cpu: CpuShares | null }): Measured {
  harness.log(`${label}: ${describeLoad(result)}${cpu ? `; ${describeCpu(cpu)}` : ''}`);
  return { ...result, cpu };
}

export interface Conversations {
  app: Application;
  groupId: string;
  userIds: string[];
  /** External ids of the threads created, one message each. */
  threadIds: string[];
}

/** An application with `users` users in one group and `threads` threads of that group. */
export async function seedConversations(harness: Harness, name: string, users: number, threads: number): Promise<Conversations> {
  const app = await createApplication(harness.system.url, harness.system.customer, name);
  const userIds = Array.from({ length: users }, (_, i) => `user-${i}`);
  for (const id of userIds) await app.api.ok('PUT', `/v1/users/${id}`, { name: `User ${id}`, email: `${id}@example.com` });
  const groupId = 'group-0';
  await app.api.ok('PUT', `/v1/groups/${groupId}`, { name: 'Group 0', members: userIds });
  const threadIds = Array.from({ length: threads }, (_, i) => `thread-${i}`);
  for (const id of threadIds)
    await app.api.ok('POST', `/v1/threads/${id}/messages`, messageBody(userIds[0], 'first', { groupID: groupId, name: id }));
  return { app, groupId, userIds, threadIds };
}

/** Round-robin over items, for spreading writes over threads (one thread would serialize them on its row lock). */
export function rotate<T>(items: readonly T[]): () => T {
  let next = 0;
  return () => items[next++ % items.length];
}

/** Machine-wide CPU time and our processes' CPU time, from /proc (Linux). */
interface CpuSnapshot {
  busy: number;
  total: number;
  byPid: Map<number, number>;
}

function cpuSnapshot(pids: readonly number[]): CpuSnapshot {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + fields[4];
  const total = fields.reduce((sum, value) => sum + value, 0);
  const byPid = new Map<number, number>();
  for (const pid of pids) {
    try {
      // Fields after the command name: utime and stime are the 12th and 13th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byPid.set(pid, Number(after[11]) + Number(after[12]));
    } catch {
      // The process is gone.
    }
  }
  return { busy: total - idle, total, byPid };
}

export interface CpuShares {
  /** Fraction of the whole machine's CPU time that was busy. */
  busy: number;
  /** Fraction of the machine's CPU time each of our processes used, largest first. */
  processes: { name: string; share: number }[];
  /** Busy time of everything else: PostgreSQL, Redis, the load generator, other users of the machine. */
  other: number;
}

export function describeCpu(cpu: CpuShares | null): string {
  if (!cpu) return '';
  const pct = (value: number) => `${(value * 100).toFixed(0)} %`;
  const parts = [...cpu.processes.map((p) => `${p.name} ${pct(p.share)}`), `other ${pct(cpu.other)}`];
  return `machine CPU busy ${pct(cpu.busy)} (${parts.join(', ')})`;
}

/** Runs `work` and measures how busy the machine was meanwhile, and which of our processes used the CPU. */
export async function withCpuShares<T>(harness: Harness, work: () => Promise<T>): Promise<{ result: T; cpu: CpuShares | null }> {
  const processes = harness.system.processes();
  const before = cpuSnapshot(processes.map((p) => p.pid));
  const result = await work();
  const after = cpuSnapshot(processes.map((p) => p.pid));
  const total = after.total - before.total;
  if (processes.length === 0 || total <= 0) return { result, cpu: null };
  const shares = processes
    .map((p) => ({ name: p.name, share: ((after.byPid.get(p.pid) ?? 0) - (before.byPid.get(p.pid) ?? 0)) / total }))
    .filter((share) => share.share > 0)
    .sort((a, b) => b.share - a.share);
  const busy = (after.busy - before.busy) / total;
  return { result, cpu: { busy, processes: shares, other: busy - shares.reduce((sum, share) => sum + share.share, 0) } };
}

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

/** Where the CPU went over several windows: each share averaged, weighted by the window's length. */
export function meanCpu(windows: readonly { cpu: CpuShares | null; seconds: number }[]): CpuShares | null {
  const known = windows.filter((window): window is { cpu: CpuShares; seconds: number } => window.cpu !== null);
  if (known.length === 0) return null;
  const total = known.reduce((sum, window) => sum + window.seconds, 0);
  const mean = (share: (cpu: CpuShares) => number) => known.reduce((sum, window) => sum + share(window.cpu) * window.seconds, 0) / total;
  const names = [...new Set(known.flatMap((window) => window.cpu.processes.map((p) => p.name)))];
  return {
    busy: mean((cpu) => cpu.busy),
    processes: names
      .map((name) => ({ name, share: mean((cpu) => cpu.processes.find((p) => p.name === name)?.share ?? 0) }))
      .sort((a, b) => b.share - a.share),
    other: mean((cpu) => cpu.other),
  };
}
