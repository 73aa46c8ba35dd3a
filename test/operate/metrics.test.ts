/**
 * Prometheus metrics (shared/src/metrics.ts): the internal /metrics server, the HTTP duration
 * histogram labelled by route pattern (never the raw URL), default Node metrics, pool gauges of
 * a TypeORM DataSource, and a worker's job counters and queue depth.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  closeServer,
  createLogger,
  createProducer,
  createRedis,
  INTERNAL_HEADERS,
  processMetrics,
  ProcessMetrics,
  startMetricsServer,
  startWorker,
} from '@collab/shared';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIdentityDataSource } from '../../services/identity/src/data-source.js';
import { startSystem, type TestSystem } from '../support/system.js';

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
    const queue = new Queue('notification-purge', { connection: queueRedis, prefix: connection.prefix });
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
