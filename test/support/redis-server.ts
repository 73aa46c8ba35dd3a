/**
 * A private `redis-server` for tests that stop Redis: on a free port, without persistence (a
 * restart comes back empty, as a Redis without its volume would), stoppable and restartable on
 * the same port so that clients reconnect to the same URL. Never the shared Redis.
 */
import { freePort } from '@collab/shared/devkit';
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';

export interface PrivateRedis {
  url: string;
  port: number;
  /** Stops the server: SIGTERM (clean shutdown) or SIGKILL (a crash). Resolves once it has exited. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same port (empty: nothing was persisted). */
  start(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  let port = 0;
  let child: ChildProcess | null = null;

  async function start(): Promise<void> {
    const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    child = started;
    const deadline = Date.now() + 10_000;
    while (!(await accepts(port))) {
      if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode} on port ${port}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not listen on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL'): Promise<void> {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(signal);
    await exited;
  }

  // Another process may take the free port before redis-server binds it: then try another one.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      await start();
      break;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
  return { url: `redis://127.0.0.1:${port}`, port, stop, start };
}
