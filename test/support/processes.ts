/**
 * Real service processes for the tests that kill, stop or cut off one (built entry points under
 * services/<name>/dist, so they need the build), processes in their own process group with their
 * output captured (the supervisor of `npm start`), and polling for what those processes do.
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

/**
 * Runs a file of this repository (`script`, from its root) with node to its end, its environment
 * only PATH and `env`, and answers its exit code and output.
 */
export function runScript(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, script), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** SIGKILLs every process spawnServiceProcess started that may still run (for afterAll). */
export function killAll(): void {
  for (const child of spawned.splice(0)) child.kill('SIGKILL');
}

/** A process started by spawnDetached: its output so far and its end. */
export interface DetachedProcess {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  /** The process ended (code or signal). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every holder of the stdout/stderr pipes (the process and all it spawned) closed them. */
  closed: Promise<void>;
  isClosed: () => boolean;
  /** The last lines of its output, for an assertion's message. */
  dump: () => string;
}

/** Every process spawnDetached started, for killDetached. */
const detached: DetachedProcess[] = [];

/**
 * Spawns `command <args>` at the repository root in its own process group, capturing its output:
 * for processes that start processes of their own (the supervisor of `npm start`), which
 * killDetached then ends with everything they started.
 */
export function spawnDetached(command: string, args: string[], env: NodeJS.ProcessEnv): DetachedProcess {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const output = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  let closedNow = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const closed = new Promise<void>((resolve) =>
    child.once('close', () => {
      closedNow = true;
      resolve();
    }),
  );
  const entry: DetachedProcess = {
    child,
    output,
    exited,
    closed,
    isClosed: () => closedNow,
    dump: () => `\n--- stdout ---\n${output.stdout.slice(-6000)}\n--- stderr ---\n${output.stderr.slice(-6000)}`,
  };
  detached.push(entry);
  return entry;
}

/**
 * SIGKILLs the process group of every process spawnDetached started whose output is still open
 * (for afterAll: whatever happened, no process of a test outlives it), and waits for them to end.
 */
export async function killDetached(): Promise<void> {
  for (const entry of detached.splice(0)) {
    if (entry.isClosed() || entry.child.pid === undefined) continue;
    try {
      process.kill(-entry.child.pid, 'SIGKILL'); // the process group spawnDetached created
    } catch {
      // already gone
    }
    await within('a killed process group to end', 10_000, entry.closed).catch(() => undefined);
  }
}

/**
 * Polls `check` every 100 ms until it returns a value other than undefined, for at most
 * `timeoutMs`; the timeout's error ends with `describeState()` (e.g. a process's output).
 */
export async function pollUntil<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined> | T | undefined, describeState = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${describeState()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Resolves with the promise's value, or rejects when it has not settled within `timeoutMs`. */
export function within<T>(what: string, timeoutMs: number, promise: Promise<T>, describeState = () => ''): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}${describeState()}`)), timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
}
