/**
 * Redis faults, on a private redis-server behind a fault proxy, with real worker processes:
 * - Redis unreachable in the middle of a batch and of a purge (its data kept, as after a restart
 *   with its append-only file): requests that need Redis answer 503 `service_unavailable` at once,
 *   requests that do not keep working, and when Redis is back the batch and the purge complete,
 *   once each, to the same state as a run without the fault; a group DELETE that answered 503
 *   (conversation could not queue its purge) is finished by identity's outbox relay.
 * - Redis restarted empty (no persistence) with work queued: a group's purge, a batch answered
 *   202 and an application's purge. The jobs are gone; the workers queue them again from what
 *   Postgres records (rows still marked, the batch's record, the application's deletion) when
 *   they reconnect, and all three complete.
 * - The gateway's Redis unreachable while an application is deleted: the invalidation identity
 *   publishes is lost to it, yet once its Redis is back the deleted application is refused at
 *   once, not after the credentials cache's TTL.
 * Prints the measured latencies and recovery times (`[fault figures]`). Needs the build.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { asCustomer, createApplication, request, uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { killAll, spawnServiceProcess } from '../support/processes.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import * as rows from '../support/rows.js';
import { seedThread } from '../support/seed.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

const BATCH_USERS = 5000;
const MESSAGES = 20_000;
/** A request that needs Redis must answer within this while Redis is down; beyond it, it hangs. */
const HANG_MS = 10_000;

let redis: PrivateRedis;
/** Between every process and Redis. */
let redisLink: FaultProxy;
/** Between the worker processes and redisLink: cuts the workers off alone. */
let workerLink: FaultProxy;
let system: TestSystem;
let app: TestApplication;
/** A worker process whose Redis is reached through workerLink. */
const startWorkerProcess = (service: 'identity' | 'conversation' | 'notification' | 'webhooks') =>
  spawnServiceProcess(service, 'main-worker', {
    ...system.env,
    REDIS_URL: `redis://127.0.0.1:${workerLink.port}`,
    JOB_LOCK_MS: '2000',
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
  });

const count = (sql: string, params: unknown[]) => rows.count(system, sql, params);
const users = () => count(`SELECT count(*)::int AS n FROM identity.users WHERE application_id = $1`, [app.id]);
const threadMessages = (threadId: string) => rows.threadMessages(system, app.id, threadId);
const applicationRows = (applicationId: string) => rows.applicationRows(system, applicationId);

async function timed(call: () => Promise<ApiResponse>): Promise<ApiResponse & { ms: number }> {
  const started = Date.now();
  const response = await call();
  return { ...response, ms: Date.now() - started };
}

/** A group with one thread (`<group>-thread`) of `messages` messages. */
const seedGroup = (groupId: string, messages: number) => seedThread(app, groupId, `${groupId}-thread`, messages);

beforeAll(async () => {
  redis = await startPrivateRedis();
  redisLink = await startFaultProxy({ port: redis.port });
  workerLink = await startFaultProxy({ port: redisLink.port });
  system = await startSystem({ workers: false, env: { REDIS_URL: `redis://127.0.0.1:${redisLink.port}`, BATCH_WAIT_MS: '0' } });
  app = await createApplication(system, 'redis faults');
  expect((await app.client.put('/v1/users/ann', { name: 'Ann' })).status).toBe(200);
  await seedGroup('kept', 1);
  startWorkerProcess('identity');
  startWorkerProcess('conversation');
  startWorkerProcess('notification');
  startWorkerProcess('webhooks');
}, 60_000);

afterAll(async () => {
  killAll();
  await Promise.all([redisLink?.accept(), workerLink?.accept()]);
  await system?.stop();
  workerLink?.close();
  redisLink?.close();
  await redis?.stop();
});

describe('Redis unreachable during a batch and a purge', () => {
  it('answers 503 at once where Redis is needed, serves the rest, and completes both once when it returns', async () => {
    await seedGroup('doomed', MESSAGES);
    await seedGroup('refused', 1);
    const ids = Array.from({ length: BATCH_USERS }, (_, index) => `batch-${index}`);
    const accepted = await app.client.post('/v1/batch', { users: ids.map((id) => ({ id, name: id })) });
    expect(accepted.status).toBe(202);
    expect((await app.client.delete('/v1/groups/doomed')).status).toBe(200);
    redisLink.down();
    const downAt = Date.now();

    const needRedis = {
      batch: await timed(() => app.client.post('/v1/batch', { users: [{ id: 'late', name: 'Late' }] })),
      groupDelete: await timed(() => app.client.delete('/v1/groups/refused')),
    };
    for (const response of Object.values(needRedis)) {
      expectError(response, 503, 'service_unavailable');
      expect(response.headers.get('retry-after')).toBe('1');
      expect(response.ms).toBeLessThan(HANG_MS);
    }
    // Reads and writes of Postgres alone do not need Redis; a batch's status is read from its record.
    const withoutRedis = {
      userRead: await timed(() => app.client.get('/v1/users/ann')),
      userWrite: await timed(() => app.client.put(`/v1/users/${uniqueId('during')}`, { name: 'During' })),
      threadRead: await timed(() => app.client.get('/v1/threads/kept-thread')),
      batchStatus: await timed(() => app.client.get(`/v1/batch/${accepted.body.jobID}`)),
    };
    for (const response of Object.values(withoutRedis)) expect(response.status).toBe(200);
    expect(['waiting', 'active']).toContain(withoutRedis.batchStatus.body.status);

    await redisLink.accept();
    const upAt = Date.now();
    const batchDoneMs = await until(async () => (await app.client.get(`/v1/batch/${accepted.body.jobID}`)).body?.status === 'completed', 'the batch');
    const purgeDoneMs = await until(async () => (await threadMessages('doomed-thread')) === 0, 'the purge');
    // The identity worker's relay carries the deletion that answered 503 into conversation.
    const refusedDoneMs = await until(async () => (await threadMessages('refused-thread')) === 0, 'the deletion that answered 503');
    await waitForQueuesIdle(system, ['identity-batch', 'conversation-purge'], 30_000);

    // The state of a run without the fault: every batch user once, both deleted groups' messages
    // gone, the other group's kept.
    expect(await users()).toBe(1 + BATCH_USERS + 1);
    expect(await threadMessages('doomed-thread')).toBe(0);
    expect(await threadMessages('kept-thread')).toBe(1);
    expect((await app.client.get('/v1/threads/kept-thread')).status).toBe(200);
    expect((await app.client.post('/v1/batch', { users: [{ id: 'after', name: 'After' }] })).status).toBeLessThan(300);

    console.log(
      '[fault figures]',
      JSON.stringify({
        fault: 'redis unreachable (connections reset, new ones refused) for ' + (upAt - downAt) + ' ms',
        latencyMsWhileDown: Object.fromEntries(Object.entries({ ...needRedis, ...withoutRedis }).map(([name, r]) => [name, `${r.status} in ${r.ms} ms`])),
        afterRedisBackMs: { batchCompleted: batchDoneMs, purgeCompleted: batchDoneMs + purgeDoneMs, deletionAnswered503Completed: batchDoneMs + purgeDoneMs + refusedDoneMs },
      }),
    );
  }, 60_000);
});

describe('Redis restarted empty with work queued', () => {
  it('queues again what Postgres records when the workers reconnect: a group purge, a batch answered 202, an application purge', async () => {
    await seedGroup('forgotten', MESSAGES);
    const doomed = await createApplication(system, 'deleted while Redis forgets');
    for (const user of ['ann', 'bob']) expect((await doomed.client.put(`/v1/users/${user}`, { name: user })).status).toBe(200);
    expect((await doomed.client.put('/v1/groups/g', { name: 'G', members: ['ann', 'bob'] })).status).toBe(200);
    const posted = await doomed.client.post('/v1/threads/t/messages', {
      authorID: 'ann',
      content: [{ type: 'p', children: [{ text: 'hello' }] }],
      createThread: { groupID: 'g', location: { page: 't' }, url: 'https://example.com', name: 't' },
    });
    expect(posted.status).toBe(200);
    const notified = await doomed.client.post('/v1/notifications', { actor_id: 'ann', recipient_id: 'bob', template: '{{actor}} wrote', url: 'https://example.com', type: 'url' });
    expect(notified.status).toBe(200);
    expect(await applicationRows(doomed.id)).toEqual({ messages: 1, threads: 1, notifications: 1, purgeRequests: 0 });

    // The workers are cut off, so the jobs wait in Redis…
    workerLink.down();
    expect((await app.client.delete('/v1/groups/forgotten')).status).toBe(200);
    const batchIds = Array.from({ length: 100 }, (_, index) => `forgotten-batch-${index}`);
    const accepted = await app.client.post('/v1/batch', { users: batchIds.map((id) => ({ id, name: id })) });
    expect(accepted.status).toBe(202);
    expect((await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret })).status).toBe(200);
    // …and are lost with everything else when Redis restarts without persistence.
    await redis.stop('SIGKILL');
    await redis.start();
    await workerLink.accept();
    const reconnectedAt = Date.now();
    await until(async () => (await threadMessages('forgotten-thread')) === 0, 'the queued-again group purge');
    const groupPurgedMs = Date.now() - reconnectedAt;
    await until(async () => (await app.client.get(`/v1/batch/${accepted.body.jobID}`)).body?.status === 'completed', 'the queued-again batch');
    const batchAppliedMs = Date.now() - reconnectedAt;
    await until(async () => (await applicationRows(doomed.id)).purgeRequests === 0, 'the queued-again application purges');
    const applicationPurgedMs = Date.now() - reconnectedAt;
    await waitForQueuesIdle(system, ['conversation-purge', 'notification-purge', 'webhooks-purge', 'identity-batch'], 30_000);

    expect(await count(`SELECT count(*)::int AS n FROM conversation.threads WHERE application_id = $1 AND external_id = 'forgotten-thread'`, [app.id])).toBe(0);
    expect(await threadMessages('kept-thread')).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM identity.users WHERE application_id = $1 AND external_id LIKE 'forgotten-batch-%'`, [app.id])).toBe(batchIds.length);
    expect(await applicationRows(doomed.id)).toEqual({ messages: 0, threads: 0, notifications: 0, purgeRequests: 0 });
    console.log(
      '[fault figures]',
      JSON.stringify({
        fault: 'redis restarted empty with a group purge, a batch and an application purge queued',
        completedAfterWorkersReconnectedMs: { groupPurge: groupPurgedMs, batch: batchAppliedMs, applicationPurge: applicationPurgedMs },
      }),
    );
  }, 60_000);
});

describe("the gateway's Redis unreachable while an application is deleted", () => {
  let gatewayLink: FaultProxy;
  let gateway: Awaited<ReturnType<typeof createGateway>>;
  let gatewayServer: Server;

  beforeAll(async () => {
    gatewayLink = await startFaultProxy({ port: redisLink.port });
    // A TTL far beyond the test: only the invalidation (or its loss) decides.
    const env = { ...system.env, REDIS_URL: `redis://127.0.0.1:${gatewayLink.port}`, CREDENTIALS_CACHE_TTL_MS: '600000' };
    gateway = await createGateway(loadGatewayConfig(env), createLogger('gateway', 'silent'), () => false);
    gatewayServer = await new Promise<Server>((resolve) => {
      const server = createServer(gateway.app).listen(0, '127.0.0.1', () => resolve(server));
    });
  });

  afterAll(async () => {
    await new Promise((resolve) => {
      gatewayServer?.close(resolve);
      gatewayServer?.closeAllConnections();
    });
    await gateway?.close();
    gatewayLink?.close();
  });

  it('refuses the deleted application at once when its Redis is back, not after the cache TTL', async () => {
    const victim = await createApplication(system, 'deleted while the gateway misses it');
    const gatewayUrl = `http://127.0.0.1:${(gatewayServer.address() as AddressInfo).port}`;
    const read = async () => request(gatewayUrl, 'GET', '/v1/users?limit=1', { token: await serverToken(victim.id, victim.secret) });
    // Its credentials are cached now.
    expect((await read()).status).toBe(200);

    gatewayLink.down();
    expect((await asCustomer(system).delete(`/v1/applications/${victim.id}`, { secret: victim.secret })).status).toBe(200);
    await gatewayLink.accept();
    const refusedMs = await until(async () => (await read()).status === 401, 'the deleted application to be refused', 10_000);
    console.log('[fault figures]', JSON.stringify({ fault: "gateway's Redis down while an application was deleted", refusedAfterRedisBackMs: refusedMs }));
  }, 30_000);
});
