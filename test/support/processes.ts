/**
 * Real service processes for the tests that kill, stop or cut off one (built entry points under
 * services/<name>/dist, so they need the build), and polling for what those processes do.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { join } from 'node:path';

export type ServiceName = 'gateway' | 'identity' | 'conversation' | 'notification' | 'webhooks';
export type ServiceEntry = 'main-worker' | 'main-api';

const ROOT = join(import.meta.dirname, '..', '..');

/** Every process spawned here, for killAll. */
const spawned: ChildProcess[] = [];

/**
 * Starts `services/<service>/dist/<entry>.js` with node, its environment this process's overlaid
 * with `env` (the test system's and the test's own variables), its output ignored unless told.
 */
export function spawnServiceProcess(
  service: ServiceName,
  entry: ServiceEntry,
  env: Record<string, string>,
  options: { stdio?: StdioOptions } = {},
): ChildProcess {
  const child = spawn(process.execPath, [join(ROOT, 'services', service, 'dist', `${entry}.js`)], {
    env: { ...process.env, ...env },
    stdio: options.stdio ?? 'ignore',
  });
  spawned.push(child);
  return child;
}

/**
 * Sends `signal` (SIGTERM unless told) and resolves with the exit code once the process has
 * exited (0 when it stopped cleanly, null when a signal ended it). A process already gone resolves at once.
 */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill(signal);
  return exited;
}

/** SIGKILLs every process spawnServiceProcess started that may still run (for afterAll). */
export function killAll(): void {
  for (const child of spawned.splice(0)) child.kill('SIGKILL');
}

/**
 * Polls `condition` every `intervalMs` until it holds, and resolves with the milliseconds that
 * took; throws `timed out waiting for <what>` after `timeoutMs`.
 */
export async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000, intervalMs = 20): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  return Date.now() - started;
}
