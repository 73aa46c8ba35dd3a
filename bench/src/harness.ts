/** What every scenario gets: the system, the run's settings, and the setup steps they share. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
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
  /** Its numbered section of the report, or several when it measures more than one table's worth. */
  run(harness: Harness): Promise<Section | Section[]>;
}

export type Measured = LoadStats & { /** Where the CPU went meanwhile (null for a running system). */ cpu: CpuShares | null };

/** Warms up with the same load, then measures it; `extra`: processes besides the system's that serve it. */
export async function measure(
  harness: Harness,
  label: string,
  load: Omit<HttpLoad, 'seconds'>,
  extra: readonly ExtraProcess[] = [],
): Promise<Measured> {
  await httpLoad({ ...load, seconds: harness.warmupSeconds });
  return report(harness, label, await withCpuShares(harness, () => httpLoad({ ...load, seconds: harness.seconds }), extra));
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
  const measured = { ...result, cpu };
  harness.log(`${label}: ${describeLoad(result)}${cpu ? `; ${describeCpu(cpu)}; CPU per request ${describeCpuPerRequest(measured)}` : ''}`);
  return measured;
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

/** Clock ticks per second of /proc's CPU times (USER_HZ); 100 on every common Linux build. */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();
const ticksToMs = (ticks: number) => (ticks * 1000) / TICKS_PER_SECOND;

/** Servers of this machine accounted as their own rows, by the command name of their processes. */
const SERVER_COMMANDS = { postgres: 'postgres', 'redis-server': 'redis' } as const;
type ServerCommand = keyof typeof SERVER_COMMANDS;

interface ProcessStat {
  command: string;
  /** utime + stime, in clock ticks. */
  ticks: number;
}

function processStat(pid: number): ProcessStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself hold spaces or parentheses.
    const close = stat.lastIndexOf(')');
    const after = stat.slice(close + 2).split(' ');
    // Fields after the command name: utime and stime are the 12th and 13th.
    return { command: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(after[11]) + Number(after[12]) };
  } catch {
    // The process is gone.
    return null;
  }
}

/** Machine-wide CPU time, our processes' CPU time, and that of PostgreSQL's and Redis's processes (Linux /proc). */
interface CpuSnapshot {
  busy: number;
  total: number;
  byPid: Map<number, number>;
  servers: Map<number, ProcessStat & { command: ServerCommand }>;
  /** PostgreSQL backends serving other databases than the system's (other users of a shared server). */
  otherDatabaseBackends: Set<number>;
}

async function cpuSnapshot(harness: Harness, pids: readonly number[]): Promise<CpuSnapshot> {
  // Other databases' backends first: a backend that starts after this query is counted as ours.
  const otherDatabaseBackends = await harness.system.sql
    .query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname IS NOT NULL AND datname <> ALL($1)', [harness.system.databaseNames])
    .then((result) => new Set(result.rows.map((row) => row.pid)))
    .catch(() => new Set<number>());
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3] + fields[4];
  const total = fields.reduce((sum, value) => sum + value, 0);
  const byPid = new Map<number, number>();
  for (const pid of pids) {
    const stat = processStat(pid);
    if (stat) byPid.set(pid, stat.ticks);
  }
  const servers = new Map<number, ProcessStat & { command: ServerCommand }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = processStat(Number(entry));
    if (stat && Object.hasOwn(SERVER_COMMANDS, stat.command)) servers.set(Number(entry), { ...stat, command: stat.command as ServerCommand });
  }
  return { busy: total - idle, total, byPid, servers, otherDatabaseBackends };
}

export interface CpuShares {
  /** Fraction of the whole machine's CPU time that was busy. */
  busy: number;
  /**
   * Each of our processes, the bench itself (load generator and SQL script), PostgreSQL (the
   * system's database and the server's own processes; other databases' backends apart) and
   * Redis: its fraction of the machine's CPU time and its CPU time in ms, largest first.
   */
  processes: { name: string; share: number; ms: number }[];
  /** Busy time of everything else: other users of the machine. */
  other: number;
  otherMs: number;
}

export function describeCpu(cpu: CpuShares | null): string {
  if (!cpu) return '';
  const pct = (value: number) => `${(value * 100).toFixed(0)} %`;
  const parts = [...cpu.processes.map((p) => `${p.name} ${pct(p.share)}`), `other ${pct(cpu.other)}`];
  return `machine CPU busy ${pct(cpu.busy)} (${parts.join(', ')})`;
}

/** A process started for one measurement only (a baseline server), accounted like the system's. */
export interface ExtraProcess {
  name: string;
  pid: number;
}

/**
 * Runs `work` and measures how busy the machine was meanwhile, and where the CPU went: our
 * processes (the system's and `extra`), the bench process, PostgreSQL and Redis. A PostgreSQL
 * backend that exits during the window loses its time since the start (pools keep theirs open
 * under load); one that starts during it counts whole.
 */
export async function withCpuShares<T>(
  harness: Harness,
  work: () => Promise<T>,
  extra: readonly ExtraProcess[] = [],
): Promise<{ result: T; cpu: CpuShares | null }> {
  const processes = [...harness.system.processes(), ...extra];
  const pids = [...processes.map((p) => p.pid), process.pid];
  const before = await cpuSnapshot(harness, pids);
  const result = await work();
  const after = await cpuSnapshot(harness, pids);
  const total = after.total - before.total;
  if (processes.length === 0 || total <= 0) return { result, cpu: null };
  const used = new Map<string, number>();
  const add = (name: string, ticks: number) => used.set(name, (used.get(name) ?? 0) + ticks);
  for (const p of processes) add(p.name, (after.byPid.get(p.pid) ?? 0) - (before.byPid.get(p.pid) ?? 0));
  add('bench', (after.byPid.get(process.pid) ?? 0) - (before.byPid.get(process.pid) ?? 0));
  for (const [pid, stat] of after.servers) {
    const otherDatabase = stat.command === 'postgres' && (before.otherDatabaseBackends.has(pid) || after.otherDatabaseBackends.has(pid));
    const previous = before.servers.get(pid);
    add(otherDatabase ? 'postgres (other databases)' : SERVER_COMMANDS[stat.command], stat.ticks - (previous?.command === stat.command ? previous.ticks : 0));
  }
  const shares = [...used]
    .map(([name, ticks]) => ({ name, share: ticks / total, ms: ticksToMs(ticks) }))
    .filter((share) => share.share > 0)
    .sort((a, b) => b.share - a.share);
  const busy = after.busy - before.busy;
  const known = [...used.values()].reduce((sum, ticks) => sum + ticks, 0);
  return { result, cpu: { busy: busy / total, processes: shares, other: (busy - known) / total, otherMs: ticksToMs(busy - known) } };
}

/** CPU time per request of each process that used any (ms), from a measurement's shares. */
export function cpuPerRequest(measured: Measured): { name: string; ms: number }[] | null {
  const requests = measured.ok + measured.failed;
  if (!measured.cpu || requests === 0) return null;
  return measured.cpu.processes.map((p) => ({ name: p.name, ms: p.ms / requests }));
}

/** Processes left out of the total CPU per request: the load generator (or SQL script) and other databases' backends. */
const NOT_THE_SYSTEM = new Set(['bench', 'postgres (other databases)']);

/**
 * One line of CPU time per request: the total of the system's processes with PostgreSQL and
 * Redis (not the bench, not other databases), then each process; with `named`, only those
 * processes and the rest of the total as one figure.
 */
export function describeCpuPerRequest(measured: Measured, named?: readonly string[]): string {
  const perRequest = cpuPerRequest(measured);
  if (!perRequest) return 'n/a';
  const system = perRequest.filter((p) => !NOT_THE_SYSTEM.has(p.name));
  const total = system.reduce((sum, p) => sum + p.ms, 0);
  const shown = named ? system.filter((p) => named.includes(p.name)) : perRequest.filter((p) => p.ms >= 0.005);
  const parts = shown.map((p) => `${p.name} ${p.ms.toFixed(2)} ms`);
  if (named) parts.push(`the rest ${(total - shown.reduce((sum, p) => sum + p.ms, 0)).toFixed(2)} ms`);
  return `total ${total.toFixed(2)} ms: ${parts.join(', ')}`;
}

/** Entries the conversation worker's relay has not yet handed to the notification and webhooks services. */
export async function outboxBacklog(harness: Harness): Promise<number> {
  return (await harness.system.sql.query<{ count: number }>('SELECT count(*)::int AS count FROM conversation.outbox')).rows[0].count;
}

/** The middle value (the upper one of an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

/** Where the CPU went over several windows: each share averaged, weighted by the window's length; CPU times summed. */
export function meanCpu(windows: readonly { cpu: CpuShares | null; seconds: number }[]): CpuShares | null {
  const known = windows.filter((window): window is { cpu: CpuShares; seconds: number } => window.cpu !== null);
  if (known.length === 0) return null;
  const total = known.reduce((sum, window) => sum + window.seconds, 0);
  const mean = (share: (cpu: CpuShares) => number) => known.reduce((sum, window) => sum + share(window.cpu) * window.seconds, 0) / total;
  const sum = (ms: (cpu: CpuShares) => number) => known.reduce((sum, window) => sum + ms(window.cpu), 0);
  const names = [...new Set(known.flatMap((window) => window.cpu.processes.map((p) => p.name)))];
  return {
    busy: mean((cpu) => cpu.busy),
    processes: names
      .map((name) => ({ name, share: mean((cpu) => cpu.processes.find((p) => p.name === name)?.share ?? 0), ms: sum((cpu) => cpu.processes.find((p) => p.name === name)?.ms ?? 0) }))
      .sort((a, b) => b.share - a.share),
    other: mean((cpu) => cpu.other),
    otherMs: sum((cpu) => cpu.otherMs),
  };
}
