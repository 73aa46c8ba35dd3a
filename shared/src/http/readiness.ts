/**
 * The /readyz handler of every process that serves HTTP: 503 `draining` once shutdown began,
 * otherwise every check run at once, each given at most `timeoutMs`, and 200 `ready` only when all
 * passed; the body names each check with `ok` or the reason it failed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './respond.js';

export interface ReadinessCheck {
  name: string;
  check: () => Promise<unknown>;
}

export interface ReadinessOptions {
  /** How long one check may take before it counts as failed. */
  timeoutMs: number;
  isDraining?: () => boolean;
}

export function readinessHandler(checks: readonly ReadinessCheck[], options: ReadinessOptions): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (_req, res) => {
    if (options.isDraining?.()) {
      res.statusCode = 503;
      sendJson(res, { status: 'draining' });
      return;
    }
    const results = await Promise.all(
      checks.map(async ({ name, check }) => {
        try {
          await withTimeout(check(), options.timeoutMs);
          return [name, 'ok'] as const;
        } catch (error) {
          return [name, (error as Error).message || 'unavailable'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    res.statusCode = ready ? 200 : 503;
    sendJson(res, { status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
