/**
 * Prometheus metrics of one process: default Node metrics (event-loop lag, memory, GC, handles),
 * the HTTP request duration histogram, PostgreSQL pool gauges and, in workers, queue depth gauges,
 * job counters and outbox backlog gauges. Served as `GET /metrics` on an internal port (METRICS_PORT), never on the
 * public or service port. A family is exported only once the process has something to report in
 * it (a pool, a queue, an outbox it watches): a family without samples tells a dashboard nothing
 * and hides which process really reports it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Queue, Worker } from 'bullmq';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import type { DataSource } from 'typeorm';
import { processSettings } from './config.js';
import { listenWhenFree } from './http/listen.js';
import type { Logger } from './logger.js';

/** The route label of a request that matched no route of the route table. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Where an app records the route table's path pattern of the request it is serving. */
const ROUTE_LOCAL = 'metricsRoute';

/** The slice of an outbox processor the gauges read (see outbox/outbox.ts). */
interface OutboxBacklog {
  schema: string;
  backlog(): Promise<{ entries: number; oldestAgeSeconds: number; failed: number }>;
}

/** The slice of pg's Pool the gauges read. */
interface PgPoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

export class ProcessMetrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'route' | 'method' | 'status'>;
  private readonly pools = new Map<string, PgPoolCounts>();
  private readonly queues = new Map<string, Queue>();
  private readonly outboxes = new Map<string, OutboxBacklog>();
  private readonly jobsCompleted: Counter<'queue'>;
  private readonly jobsFailed: Counter<'queue'>;
  /** Answers a service replayed for a repeated Idempotency-Key, by route pattern. */
  private readonly idempotentReplays: Counter<'route'>;
  /** The families registered on first use, by what turns them on. */
  private readonly poolFamilies: Metric[] = [];
  private readonly queueFamilies: Metric[] = [];
  private readonly outboxFamilies: Metric[] = [];
  private readonly exported = new Set<Metric>();

  // Over 80 lines: every metric family this process exports, declared one after another.
  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // The GC histogram gets a series per kind only at that kind's first collection: start each at
    // 0, so that the family is never empty and a rate() has a baseline.
    const gc = this.registry.getSingleMetric('nodejs_gc_duration_seconds') as Histogram<'kind'> | undefined;
    for (const kind of ['minor', 'major', 'incremental', 'weakcb']) gc?.zero({ kind });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Duration of HTTP requests, by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    const pools = this.pools;
    const poolGauge = (name: string, help: string, read: (pool: PgPoolCounts) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['pool'],
        registers: [],
        collect() {
          this.reset();
          for (const [label, pool] of pools) this.set({ pool: label }, read(pool));
        },
      });
    this.poolFamilies.push(
      poolGauge('db_pool_connections_total', 'PostgreSQL connections open in the pool', (pool) => pool.totalCount),
      poolGauge('db_pool_connections_idle', 'PostgreSQL connections open and idle in the pool', (pool) => pool.idleCount),
      poolGauge('db_pool_clients_waiting', 'Queries waiting for a PostgreSQL connection', (pool) => pool.waitingCount),
    );
    const queues = this.queues;
    const queueJobs = new Gauge({
      name: 'bullmq_queue_jobs',
      help: 'Jobs in a BullMQ queue by state (read from Redis at scrape time)',
      labelNames: ['queue', 'state'],
      registers: [],
      async collect() {
        this.reset();
        for (const [name, queue] of queues) {
          const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
          for (const [state, count] of Object.entries(counts)) this.set({ queue: name, state }, count);
        }
      },
    });
    this.queueFamilies.push(queueJobs);
    // Read from Postgres at scrape time: entries recorded and not yet handled, and how long the
    // oldest has waited (one that keeps failing, e.g. a dependent service down, shows here).
    const outboxes = this.outboxes;
    type Backlog = Awaited<ReturnType<OutboxBacklog['backlog']>>;
    const outboxGauge = (name: string, help: string, read: (backlog: Backlog) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['schema'],
        registers: [],
        async collect() {
          this.reset();
          for (const [schema, outbox] of outboxes) this.set({ schema }, read(await outbox.backlog()));
        },
      });
    this.outboxFamilies.push(
      outboxGauge('outbox_entries_pending', 'Outbox entries recorded and not handled yet (failed ones aside)', (backlog) => backlog.entries),
      outboxGauge('outbox_oldest_entry_age_seconds', 'Age of the oldest outbox entry not handled yet (0: none)', (backlog) => backlog.oldestAgeSeconds),
      // Refused by the service they go to (e.g. too large): kept, never retried by themselves.
      outboxGauge('outbox_entries_failed', 'Outbox entries kept as failed: refused, waiting for `npm run outbox -- retry`', (backlog) => backlog.failed),
    );
    this.jobsCompleted = new Counter({
      name: 'bullmq_jobs_completed_total',
      help: 'Jobs this worker process completed',
      labelNames: ['queue'],
      registers: [],
    });
    this.idempotentReplays = new Counter({
      name: 'idempotent_replays_total',
      help: 'Answers replayed to a request repeating an Idempotency-Key (nothing written again), by route pattern',
      labelNames: ['route'],
      registers: [],
    });
    this.jobsFailed = new Counter({
      name: 'bullmq_jobs_failed_total',
      help: 'Job attempts that failed in this worker process (retried or not)',
      labelNames: ['queue'],
      registers: [],
    });
  }

  /** Adds these families to the registry the first time something is there to report in them. */
  private export(families: Metric[]): void {
    for (const family of families) {
      if (this.exported.has(family)) continue;
      this.registry.registerMetric(family);
      this.exported.add(family);
    }
  }

  /** Reports the pg pool behind a TypeORM DataSource (postgres driver) under `pool`. */
  watchPool(label: string, dataSource: DataSource): void {
    const pool = (dataSource.driver as unknown as { master?: PgPoolCounts }).master;
    if (!pool || typeof pool.totalCount !== 'number') return;
    this.pools.set(label, pool);
    this.export(this.poolFamilies);
  }

  unwatchPool(label: string): void {
    this.pools.delete(label);
  }

  /** Counts a worker's completed and failed jobs, and reports its queue's depth on scrape. */
  watchWorker(worker: Worker, queue?: Queue): void {
    this.export([this.jobsCompleted, this.jobsFailed]);
    this.jobsCompleted.inc({ queue: worker.name }, 0);
    this.jobsFailed.inc({ queue: worker.name }, 0);
    worker.on('completed', () => this.jobsCompleted.inc({ queue: worker.name }));
    worker.on('failed', () => this.jobsFailed.inc({ queue: worker.name }));
    if (!queue) return;
    this.queues.set(queue.name, queue);
    this.export(this.queueFamilies);
  }

  /**
   * Counts the replays of a route that takes an Idempotency-Key (from 0, so that its rate has a
   * baseline); returns what counts one.
   */
  watchIdempotentRoute(route: string): () => void {
    this.export([this.idempotentReplays]);
    this.idempotentReplays.inc({ route }, 0);
    return () => this.idempotentReplays.inc({ route });
  }

  /** Reports the backlog of an outbox this process relays, read on scrape. */
  watchOutbox(outbox: OutboxBacklog): void {
    this.outboxes.set(outbox.schema, outbox);
    this.export(this.outboxFamilies);
  }

  /**
   * Express middleware recording each request's duration once the response is sent. The route
   * label is the route table's pattern an app recorded (see setMetricsRoute), else the pattern of
   * the Express route that served it, else `unmatched`: never the raw URL.
   */
  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    this.timeResponse(req, res, () => {
      const marked = res.locals[ROUTE_LOCAL] as string | undefined;
      const expressRoute = (req.route as { path?: unknown } | undefined)?.path;
      return marked ?? (typeof expressRoute === 'string' ? `${req.baseUrl}${expressRoute}` : UNMATCHED_ROUTE);
    });
    next();
  };

  /** Records the duration of the response from now until it is sent, under the route pattern `route` names then. */
  timeResponse(req: IncomingMessage, res: ServerResponse, route: () => string): void {
    const end = this.httpDuration.startTimer();
    res.on('finish', () => end({ route: route(), method: req.method, status: String(res.statusCode) }));
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Records the route table's path pattern (e.g. `/v1/users/:userID`) of the request being served. */
export function setMetricsRoute(res: Response, pattern: string): void {
  res.locals[ROUTE_LOCAL] = pattern;
}

let processMetricsInstance: ProcessMetrics | null = null;

/** The metrics of this process (one registry per process, created on first use). */
export function processMetrics(): ProcessMetrics {
  processMetricsInstance ??= new ProcessMetrics();
  return processMetricsInstance;
}

/** The server of `GET /metrics` of `metrics`, not listening yet. */
function metricsServer(metrics: ProcessMetrics, logger: Logger): Server {
  return createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found\n');
      return;
    }
    metrics.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': metrics.registry.contentType }).end(text),
      (error: Error) => {
        logger.warn({ err: (error as Error).message }, 'metrics collection failed');
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics collection failed\n');
      },
    );
  });
}

/** Serves `GET /metrics` of `metrics` on its own port; resolves once listening (a taken port is tried again). */
export async function startMetricsServer(
  metrics: ProcessMetrics,
  port: number,
  logger: Logger,
  host = processSettings().HOST,
): Promise<Server> {
  const server = metricsServer(metrics, logger);
  await listenWhenFree(server, port, host, logger, 'metrics');
  logger.info({ port: (server.address() as AddressInfo).port }, 'metrics listening');
  return server;
}

export function closeServer(server: Server | null): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Starts the metrics server of an entry point when `port` is not 0, and closes it on shutdown.
 */
export async function serveMetrics(
  lifecycle: { onShutdown(cleanup: () => Promise<unknown>): void },
  port: number,
  logger: Logger,
  metrics: ProcessMetrics = processMetrics(),
): Promise<void> {
  if (port === 0) return;
  const server = metricsServer(metrics, logger);
  lifecycle.onShutdown(() => closeServer(server));
  // Not waited for: a taken metrics port is tried again in the background and never holds up
  // the API; metrics never take it down.
  const host = processSettings().HOST;
  listenWhenFree(server, port, host, logger, 'metrics').then(
    () => logger.info({ port }, 'metrics listening'),
    (error: Error) => logger.warn({ err: error.message, port }, 'metrics not served'),
  );
}
