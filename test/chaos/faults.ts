/**
 * The faults of the chaos run, one after the other while the load runs: a SIGKILL of every
 * supervised process (each API, each worker, the gateway), Redis restarted with its data lost,
 * Redis down for 15 s, and a PostgreSQL crash with its restart. After each, the time until the
 * system is ready again: every process runs and answers on /metrics, the gateway's /readyz
 * answers 200 and a write through the API succeeds.
 */
import type { PrivateRedis } from '../support/redis-server.js';
import type { ProcessSystem } from '../support/process-system.js';
import { pollUntil } from '../support/processes.js';
import type { OwnPostgres } from './cluster.js';

/** How long Redis stays down in the outage fault. */
export const REDIS_OUTAGE_MS = 15_000;

export interface Fault {
  name: string;
  /** Does the damage; resolves when the fault has ended (the restart done, the outage over). */
  inject(): Promise<void>;
}

export interface FaultRecord {
  name: string;
  /** When it began and ended, ms since the epoch. */
  startedAt: number;
  endedAt: number;
  /** From its end until the system was ready again; null when it was not within READY_TIMEOUT_MS. */
  readyAfterMs: number | null;
  /** Why it was not ready in time. */
  notReady: string | null;
  /** For a killed process: the pid it had and the one it has again. */
  detail: string;
}

/** Every fault, in the order the run injects them. */
export function faultsFor(system: ProcessSystem, redis: PrivateRedis, postgres: OwnPostgres): Fault[] {
  const names = system.processes().map((running) => running.name);
  const kill = (name: string): Fault => ({
    name: `SIGKILL ${name}`,
    async inject() {
      const target = system.processes().find((running) => running.name === name);
      if (!target) throw new Error(`${name} is not running: nothing to kill`);
      process.kill(target.pid, 'SIGKILL');
    },
  });
  return [
    ...names.sort().map(kill),
    {
      name: 'Redis restarted, its data lost',
      async inject() {
        await redis.stop('SIGKILL');
        await redis.start();
      },
    },
    {
      name: `Redis down for ${REDIS_OUTAGE_MS / 1000} s`,
      async inject() {
        await redis.stop('SIGKILL');
        // The outage itself: how long the fault lasts, not a wait for something.
        await new Promise((resolve) => setTimeout(resolve, REDIS_OUTAGE_MS));
        await redis.start();
      },
    },
    {
      name: 'PostgreSQL crashed (stop -m immediate) and restarted',
      async inject() {
        postgres.crash();
        await postgres.start();
      },
    },
  ];
}

/** How long the run waits for the system to be ready after a fault before it records it as not ready and goes on. */
export const READY_TIMEOUT_MS = 180_000;

/**
 * Every supervised process runs and serves /metrics, /readyz answers 200 and `probe` succeeds;
 * the timeout's error says which of them was missing last.
 */
export async function waitUntilReady(system: ProcessSystem, expected: number, probe: () => Promise<number>, timeoutMs: number): Promise<void> {
  let missing = '';
  await pollUntil(
    'the system to be ready again',
    timeoutMs,
    async () => {
      const running = system.processes();
      if (running.length < expected) {
        missing = `running: ${running.map((found) => found.name).join(', ')}`;
        return undefined;
      }
      for (const { name, metricsUrl } of running) {
        if (!metricsUrl) continue;
        const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(2000) }).catch((error: Error) => error);
        if (response instanceof Response) await response.arrayBuffer();
        if (!(response instanceof Response) || response.status !== 200) {
          missing = `${name}'s /metrics: ${response instanceof Response ? response.status : response.message}`;
          return undefined;
        }
      }
      const ready = await fetch(`${system.url}/readyz`, { signal: AbortSignal.timeout(2000) }).catch((error: Error) => error);
      const body = ready instanceof Response ? await ready.text() : ready.message;
      if (!(ready instanceof Response) || ready.status !== 200) {
        missing = `/readyz: ${ready instanceof Response ? ready.status : ''} ${body}`;
        return undefined;
      }
      const status = await probe();
      if (status !== 200) {
        missing = `the probe write: ${status}`;
        return undefined;
      }
      return true;
    },
    () => ` (${missing})`,
  );
}

/**
 * Injects the faults spread evenly over `durationMs` from now, each once the system is ready
 * after the one before; answers what each did.
 */
export async function runFaults(
  system: ProcessSystem,
  faults: Fault[],
  probe: () => Promise<number>,
  durationMs: number,
  log: (line: string) => void,
): Promise<FaultRecord[]> {
  const expected = system.processes().length;
  const spacingMs = durationMs / (faults.length + 1);
  const start = Date.now();
  const records: FaultRecord[] = [];
  for (const [index, fault] of faults.entries()) {
    const due = start + spacingMs * (index + 1);
    while (Date.now() < due) await new Promise((resolve) => setTimeout(resolve, 100));
    const before = system.processes().map((running) => `${running.name}:${running.pid}`);
    const startedAt = Date.now();
    await fault.inject();
    const endedAt = Date.now();
    // Not ready in time is recorded (the run then fails) and the next fault comes all the same.
    const notReady = await waitUntilReady(system, expected, probe, READY_TIMEOUT_MS).then(
      () => null,
      (error: Error) => error.message,
    );
    const readyAfterMs = notReady ? null : Date.now() - endedAt;
    const after = system.processes().map((running) => `${running.name}:${running.pid}`);
    const restarted = after.filter((entry) => !before.includes(entry)).map((entry) => entry.split(':')[0]);
    const detail = restarted.length > 0 ? `restarted: ${restarted.join(', ')}` : 'no process restarted';
    records.push({ name: fault.name, startedAt, endedAt, readyAfterMs, detail, notReady });
    log(`${fault.name}: ${notReady ?? `ready ${readyAfterMs} ms after it ended`} (${detail})`);
  }
  return records;
}
