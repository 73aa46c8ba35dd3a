/**
 * Prometheus metrics (shared/src/metrics.ts): the internal /metrics server, the HTTP duration
 * histogram labelled by route pattern (never the raw URL), default Node metrics, pool gauges of
 * a TypeORM DataSource, and a worker's job counters and queue depth; and a real gateway process's
 * /metrics after traffic: no family without samples, a 405 under its route, upstream failures and
 * rate-limited requests counted. The gateway process needs the build.
 */
import type { ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { createServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  closeServer,
  createLogger,
  createProducer,
  createRedis,
  INTERNAL_HEADERS,
  processMetrics,
  ProcessMetrics,
  queuePrefix,
  startMetricsServer,
  startWorker,
} from '@collab/shared';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, until } from '@collab/shared/devkit';
import { createIdentityDataSource } from '../../services/identity/src/data-source.js';
import { createApplication, request, type TestApplication } from '../support/client.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

const logger = createLogger('test', 'silent');

/** The value of the sample `name{labels}` in a scrape, or undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.slice(name.length).match(/^\{(.*)\}/)?.[1] ?? '';
    const present = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

async function scrape(server: Server): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

describe('metrics', () => {
  let system: TestSystem;
  let server: Server;

  beforeAll(async () => {
    system = await startSystem({ workers: false });
    const started = await startMetricsServer(processMetrics(), 0, logger, '127.0.0.1');
    if (!started) throw new Error('metrics server did not start');
    server = started;
  });

  afterAll(async () => {
    await closeServer(server);
    await system?.stop();
  });

  it('serves only GET /metrics on its own port', async () => {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/users`);
    expect(response.status).toBe(404);
    await response.text();
  });

  it('records service requests by route pattern, method and status, never by raw URL', async () => {
    const userID = `metrics-${randomBytes(4).toString('hex')}`;
    const response = await fetch(`${system.serviceUrls.identity}/v1/users/${userID}`, {
      headers: { [INTERNAL_HEADERS.internalToken]: system.env.INTERNAL_TOKEN, [INTERNAL_HEADERS.applicationId]: randomUUID() },
    });
    await response.text();
    // Without the internal credential: no route is reached.
    const refused = await fetch(`${system.serviceUrls.identity}/v1/users/${userID}`);
    await refused.text();
    expect(refused.status).toBe(404);

    const text = await scrape(server);
    const labels = { route: '/v1/users/:userID', method: 'GET', status: String(response.status) };
    expect(sample(text, 'http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: 'unmatched', method: 'GET', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(userID);
  });

  it('records gateway requests by the route table pattern', async () => {
    const userID = `gw-${randomBytes(4).toString('hex')}`;
    const response = await fetch(`${system.url}/v1/users/${userID}`);
    await response.text();
    const missing = await fetch(`${system.url}/v1/no-such-thing-${userID}`);
    await missing.text();

    const text = await scrape(server);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/v1/users/:userID', method: 'GET', status: String(response.status) })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: 'unmatched', method: 'GET', status: String(missing.status) })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(userID);
  });

  it('includes the default metrics: event-loop lag and process memory', async () => {
    const text = await scrape(server);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
  });

  it('reports the PostgreSQL pool of a DataSource', async () => {
    const db = createIdentityDataSource(system.env.DATABASE_URL, 2);
    await db.initialize();
    try {
      processMetrics().watchPool('metrics-test', db);
      await db.query('SELECT 1');
      const text = await scrape(server);
      expect(sample(text, 'db_pool_connections_total', { pool: 'metrics-test' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'db_pool_connections_idle', { pool: 'metrics-test' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'db_pool_clients_waiting', { pool: 'metrics-test' })).toBe(0);
    } finally {
      processMetrics().unwatchPool('metrics-test');
      await db.destroy();
    }
  });

  it("counts a worker's completed jobs and reports its queue's depth", async () => {
    const metrics = new ProcessMetrics();
    const metricsServer = await startMetricsServer(metrics, 0, logger, '127.0.0.1');
    if (!metricsServer) throw new Error('metrics server did not start');
    const connection = { redisUrl: system.env.REDIS_URL, prefix: `test-metrics-${randomBytes(6).toString('hex')}` };
    const worker = startWorker(
      'notification-purge',
      { 'marked.purge': async () => 'done', 'application.purge': async () => 'done' },
      { ...connection, logger },
    );
    const queueRedis = createRedis(connection.redisUrl, { maxRetriesPerRequest: 1 });
    const queue = new Queue('notification-purge', { connection: queueRedis, prefix: queuePrefix(connection.prefix, 'notification-purge') });
    const producer = createProducer('notification-purge', connection);
    try {
      metrics.watchWorker(worker, queue);
      const before = await scrape(metricsServer);
      expect(sample(before, 'bullmq_jobs_completed_total', { queue: 'notification-purge' })).toBe(0);
      expect(sample(before, 'bullmq_queue_jobs', { queue: 'notification-purge', state: 'waiting' })).toBe(0);

      const job = await producer.add('marked.purge', { applicationId: randomUUID(), requestId: 'metrics-test' });
      expect(await producer.waitForOutcome(job.id!, 20_000)).toMatchObject({ state: 'completed' });
      // The worker's 'completed' event follows the job's completion in Redis.
      await expect.poll(async () => sample(await scrape(metricsServer), 'bullmq_jobs_completed_total', { queue: 'notification-purge' })).toBe(1);
      const after = await scrape(metricsServer);
      expect(sample(after, 'bullmq_jobs_failed_total', { queue: 'notification-purge' })).toBe(0);
      for (const state of ['waiting', 'active', 'delayed', 'failed'])
        expect(sample(after, 'bullmq_queue_jobs', { queue: 'notification-purge', state })).toBe(0);
    } finally {
      await worker.close();
      await producer.close();
      await queue.close();
      queueRedis.disconnect();
      await closeServer(metricsServer);
      const redis = createRedis(connection.redisUrl);
      const keys = await redis.keys(`${connection.prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

/** Metric families of a scrape (from their TYPE lines) with no sample line. */
function emptyFamilies(text: string): string[] {
  const lines = text.split('\n');
  const families = lines.filter((line) => line.startsWith('# TYPE ')).map((line) => line.split(' ')[2]);
  const samples = lines.filter((line) => line !== '' && !line.startsWith('#')).map((line) => line.split(/[{ ]/)[0]);
  // A histogram's samples are <name>_bucket, _sum and _count.
  return families.filter((family) => !samples.some((name) => name === family || name.startsWith(`${family}_`)));
}

describe('the gateway process’s /metrics after traffic', () => {
  let system: TestSystem;
  let gateway: ChildProcess;
  let gatewayUrl: string;
  let metricsUrl: string;
  /** Accepts connections and never answers: the webhooks service as the gateway sees it here. */
  let silent: TcpServer;
  const sockets = new Set<Socket>();
  let app: TestApplication;
  let limited: TestApplication;
  const RATE_LIMIT = 5;

  beforeAll(async () => {
    system = await startSystem({ workers: false });
    app = await createApplication(system, 'metrics');
    limited = await createApplication(system, 'metrics-limited');
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const [port, metricsPort, closedPort] = await Promise.all([freePort(), freePort(), freePort()]);
    gatewayUrl = `http://127.0.0.1:${port}`;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    gateway = spawnServiceProcess('gateway', 'main-api', {
      ...system.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      // Nothing listens there: the notification service is unreachable (503).
      NOTIFICATION_URL: `http://127.0.0.1:${closedPort}`,
      WEBHOOKS_URL: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
      UPSTREAM_TIMEOUT_MS: '300',
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      RATE_LIMIT_BURST: String(RATE_LIMIT),
    });
    await until(async () => (await fetch(`${gatewayUrl}/healthz`).catch(() => null))?.ok === true, 'the gateway process');
  });

  afterAll(async () => {
    if (gateway) await stopProcess(gateway);
    killAll();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    await system?.stop();
  });

  const call = async (method: string, path: string, application: TestApplication | null, body?: unknown) =>
    request(gatewayUrl, method, path, { token: application ? await serverToken(application.id, application.secret) : null, body });

  async function gatewayScrape(): Promise<string> {
    const response = await fetch(metricsUrl);
    expect(response.status).toBe(200);
    return response.text();
  }

  it('reports every family it exports with samples, a 405 under its route, upstream failures and rate-limited requests', async () => {
    expect((await call('GET', '/v1/verify', app)).status).toBe(200);
    expect((await call('PATCH', `/v1/users/metrics-${randomBytes(4).toString('hex')}`, null)).status).toBe(405);
    const unavailable = await call('POST', '/v1/notifications', app, {});
    expect(unavailable.status).toBe(503);
    expect(unavailable.body.error).toBe('service_unavailable');
    const timedOut = await call('GET', '/v1/webhooks/deliveries', app);
    expect(timedOut.status).toBe(504);
    expect(timedOut.body.error).toBe('gateway_timeout');
    // The budget is RATE_LIMIT at once: one more within the same moment is refused.
    const statuses: number[] = [];
    for (let sent = 0; sent <= RATE_LIMIT * 2 && !statuses.includes(429); sent++) statuses.push((await call('GET', '/v1/verify', limited)).status);
    expect(statuses.filter((status) => status === 429)).toHaveLength(1);

    const text = await gatewayScrape();
    expect(emptyFamilies(text)).toEqual([]);
    // The families of workers and services with a database are not the gateway's.
    for (const family of ['db_pool_connections_total', 'bullmq_queue_jobs', 'bullmq_jobs_completed_total', 'outbox_entries_pending'])
      expect(text).not.toContain(`# TYPE ${family} `);
    expect(sample(text, 'http_request_duration_seconds_count', { route: '/v1/users/:userID', method: 'PATCH', status: '405' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', { route: 'unmatched', method: 'PATCH' })).toBeUndefined();
    expect(sample(text, 'gateway_upstream_errors_total', { service: 'notification', code: 'service_unavailable' })).toBe(1);
    expect(sample(text, 'gateway_upstream_errors_total', { service: 'identity', code: 'service_unavailable' })).toBe(0);
    expect(sample(text, 'gateway_upstream_errors_total', { service: 'webhooks', code: 'bad_gateway' })).toBe(0);
    expect(sample(text, 'gateway_upstream_timeouts_total', { service: 'webhooks' })).toBe(1);
    expect(sample(text, 'gateway_upstream_timeouts_total', { service: 'notification' })).toBe(0);
    expect(sample(text, 'gateway_rate_limited_requests_total', {})).toBe(1);
  });
});
