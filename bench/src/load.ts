/**
 * Load generation, bounded in time: HTTP through autocannon, SQL baselines through concurrent
 * loops on a pg pool. Both are summarized the same way (successful requests per second, p50 and
 * p99 of successful requests), so a figure and its baseline compare like for like.
 */
import autocannon from 'autocannon';

export interface LoadStats {
  /** Successful (2xx, or no error for SQL) operations. */
  ok: number;
  failed: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  /** Count per HTTP status (or 'error' for SQL), to show what failed. */
  outcomes: Record<string, number>;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summarize(latencies: number[], failed: number, seconds: number, outcomes: Record<string, number>): LoadStats {
  latencies.sort((a, b) => a - b);
  return {
    ok: latencies.length,
    failed,
    seconds,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    outcomes,
  };
}

export interface HttpLoad {
  baseUrl: string;
  /** A fixed path, or one computed per request (to spread writes over several threads). */
  path: string | (() => string);
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** Sent as JSON: a fixed body, or one computed per request (to make each request's content unique). */
  body?: unknown;
  bodyPerRequest?: () => unknown;
  connections: number;
  seconds: number;
  /** Requests per second over all connections; unset: as fast as the server answers. */
  rate?: number;
}

export interface RunningLoad {
  /** Ends the load early (e.g. when the purge it accompanies has finished). */
  stop(): void;
  done: Promise<LoadStats>;
}

export function startHttpLoad(load: HttpLoad): RunningLoad {
  const headers: Record<string, string> = { ...load.headers };
  if (load.body !== undefined || load.bodyPerRequest) headers['content-type'] = 'application/json';
  const { path, bodyPerRequest } = load;
  const perRequest = typeof path !== 'string' || bodyPerRequest !== undefined;
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  let failed = 0;
  const startedAt = performance.now();
  let instance: ReturnType<typeof autocannon> | undefined;
  const done = new Promise<LoadStats>((resolve, reject) => {
    instance = autocannon(
      {
        url: `${load.baseUrl}${typeof path === 'string' ? path : path()}`,
        connections: load.connections,
        duration: load.seconds,
        overallRate: load.rate,
        method: load.method ?? 'GET',
        headers,
        body: load.body === undefined ? undefined : JSON.stringify(load.body),
        requests: perRequest
          ? [
              {
                setupRequest: (request) => ({
                  ...request,
                  ...(typeof path !== 'string' && { path: path() }),
                  ...(bodyPerRequest && { body: JSON.stringify(bodyPerRequest()) }),
                }),
              },
            ]
          : undefined,
      },
      (error, result) => {
        if (error) reject(error);
        else {
          failed += result.errors;
          if (result.errors > 0) outcomes.error = result.errors;
          resolve(summarize(latencies, failed, (performance.now() - startedAt) / 1000, outcomes));
        }
      },
    );
    // Our own recording (not autocannon's whole-millisecond histogram): sub-millisecond p50s matter here.
    instance.on('response', (_client, status, _bytes, responseTime) => {
      outcomes[status] = (outcomes[status] ?? 0) + 1;
      if (status >= 200 && status < 300) latencies.push(responseTime);
      else failed += 1;
    });
  });
  return { stop: () => instance?.stop(), done };
}

export const httpLoad = (load: HttpLoad): Promise<LoadStats> => startHttpLoad(load).done;

/** Runs `operation` in `connections` concurrent loops for `seconds`. */
export async function sqlLoad(load: { connections: number; seconds: number; operation: (loop: number) => Promise<void> }): Promise<LoadStats> {
  const latencies: number[] = [];
  const outcomes: Record<string, number> = {};
  let failed = 0;
  const startedAt = performance.now();
  const endAt = startedAt + load.seconds * 1000;
  await Promise.all(
    Array.from({ length: load.connections }, async (_, loop) => {
      while (performance.now() < endAt) {
        const before = performance.now();
        try {
          await load.operation(loop);
          latencies.push(performance.now() - before);
        } catch (error) {
          failed += 1;
          const key = `error: ${(error as Error).message.slice(0, 80)}`;
          outcomes[key] = (outcomes[key] ?? 0) + 1;
        }
      }
    }),
  );
  return summarize(latencies, failed, (performance.now() - startedAt) / 1000, outcomes);
}

/** One line for the console and the report: rate, latencies, and failures when there were any. */
export function describeLoad(stats: LoadStats): string {
  const failures = stats.failed > 0 ? `, ${stats.failed} failed (${JSON.stringify(stats.outcomes)})` : '';
  return `${stats.rps.toFixed(0)} req/s, p50 ${stats.p50.toFixed(2)} ms, p99 ${stats.p99.toFixed(2)} ms${failures}`;
}
