/**
 * A downstream service failing behind a real gateway: the conversation API runs as its own
 * process, reached through a fault proxy.
 * - Killed with SIGKILL: its routes answer 503 `service_unavailable` in the error envelope with
 *   Retry-After, at once; identity's and notification's routes keep working; when it is started
 *   again the same gateway serves its routes again, without a restart.
 * - Connections reset in the middle of requests: 503 in the envelope, never a hang.
 * - Slower than UPSTREAM_TIMEOUT_MS: 504 `gateway_timeout` in the envelope.
 * - Notification unreachable from identity (its API and its worker) while a user or an
 *   application is deleted: the DELETE answers 503 with Retry-After, the user or application is
 *   gone at once, and the deletion waits in identity's outbox; once notification is reachable
 *   again, the identity worker's relay finishes it without the DELETE being repeated: nothing of
 *   it can be read any more, and everything is purged.
 * Prints the latencies and the time to recover (`[fault figures]`). Needs the build.
 */
import type { ChildProcess } from 'node:child_process';
import { createLogger } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { freePort, loopbackServer, until, type LoopbackServer } from '@collab/shared/devkit';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { loadIdentityConfig } from '../../services/identity/src/config.js';
import { createIdentityService } from '../../services/identity/src/service.js';
import { createApplication, request, type ApiResponse, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { applicationRows, count } from '../support/rows.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';

const UPSTREAM_TIMEOUT_MS = 1000;
/** A request answering after this hangs. */
const HANG_MS = 10_000;

let system: TestSystem;
let app: TestApplication;
let conversationPort: number;
let conversation: ChildProcess | null = null;
let link: FaultProxy;
let gateway: Awaited<ReturnType<typeof createGateway>>;
let gatewayServer: LoopbackServer;
let gatewayUrl: string;
/**
 * Between identity and the notification service (its deletion cascade): both the gateway's
 * identity service and the identity worker process, whose relay finishes the deletions.
 */
let notificationLink: FaultProxy;
let identity: Awaited<ReturnType<typeof createIdentityService>>;
let identityServer: LoopbackServer;

function startConversation(): ChildProcess {
  conversation = spawnServiceProcess('conversation', 'main-api', {
    ...system.env,
    PORT: String(conversationPort),
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  return conversation;
}

async function call(method: string, path: string, body?: unknown, as: TestApplication = app): Promise<ApiResponse & { ms: number }> {
  const started = Date.now();
  const response = await request(gatewayUrl, method, path, { token: await serverToken(as.id, as.secret), body });
  return { ...response, ms: Date.now() - started };
}

/** How long a wait here may take. */
const WAIT_MS = 20_000;

function expectUnavailable(response: ApiResponse & { ms: number }) {
  expectError(response, 503, 'service_unavailable');
  expect(response.headers.get('retry-after')).toBe('1');
  expect(response.ms).toBeLessThan(HANG_MS);
}

const threadRead = () => call('GET', '/v1/threads/t1');

// Identity's outbox relay runs in the identity worker process below, which reaches
// notification through the fault proxy too.
systemWithApplication('downstream faults', async (started) => {
  ({ system, app } = started);
  conversationPort = await freePort();
  link = await startFaultProxy({ port: conversationPort });
  startConversation();
  // An identity service of its own (same database), whose deletion cascade reaches notification
  // through a fault proxy.
  notificationLink = await startFaultProxy({ port: Number(new URL(system.serviceUrls.notification).port) });
  identity = await createIdentityService(
    loadIdentityConfig({ ...system.env, NOTIFICATION_URL: `http://127.0.0.1:${notificationLink.port}` }),
    createLogger('identity', 'silent'),
  );
  identityServer = await loopbackServer(identity.app);
  spawnServiceProcess('identity', 'main-worker', {
    ...system.env,
    NOTIFICATION_URL: `http://127.0.0.1:${notificationLink.port}`,
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  // A gateway of its own, whose conversation service is the process behind the fault proxy.
  const env = {
    ...system.env,
    IDENTITY_URL: identityServer.origin,
    CONVERSATION_URL: `http://127.0.0.1:${link.port}`,
    UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
  };
  gateway = await createGateway(loadGatewayConfig(env), createLogger('gateway', 'silent'), () => false);
  gatewayServer = await loopbackServer(gateway.app);
  gatewayUrl = gatewayServer.origin;

  expect((await call('PUT', '/v1/users/ann', { name: 'Ann' })).status).toBe(200);
  expect((await call('PUT', '/v1/groups/g1', { name: 'G1', members: ['ann'] })).status).toBe(200);
  await until(async () => (await call('GET', '/v1/threads?limit=1')).status === 200, 'the conversation process', WAIT_MS);
  const created = await call('POST', '/v1/threads/t1/messages', {
    authorID: 'ann',
    content: [{ type: 'p', children: [{ text: 'hello' }] }],
    createThread: { groupID: 'g1', location: { page: 't1' }, url: 'https://example.com', name: 't1' },
  });
  expect(created.status).toBe(200);
}, {
  outboxRelay: false,
  beforeStop: async () => {
    killAll();
    link?.close();
    notificationLink?.close();
    await gatewayServer?.close();
    await identityServer?.close();
    await gateway?.close();
    await identity?.close();
  },
  startTimeoutMs: 60_000,
});

describe('a downstream service killed', () => {
  it('answers 503 in the envelope for its routes, serves the others, and recovers when it returns', async () => {
    expect((await threadRead()).status).toBe(200);
    await stopProcess(conversation!, 'SIGKILL');

    const whileDown = { threadRead: await threadRead(), messagePost: await call('POST', '/v1/threads/t1/messages', { authorID: 'ann', content: [] }) };
    for (const response of Object.values(whileDown)) expectUnavailable(response);
    // Other services' routes are unaffected.
    const others = { identity: await call('GET', '/v1/users/ann'), notification: await call('GET', '/v1/users/ann/notifications') };
    for (const response of Object.values(others)) expect(response.status).toBe(200);

    const restartedAt = Date.now();
    startConversation();
    const recoveredMs = await until(async () => (await threadRead()).status === 200, 'the gateway to reach conversation again', WAIT_MS);
    expect((await threadRead()).body.id).toBe('t1');
    console.log(
      '[fault figures]',
      JSON.stringify({
        fault: 'conversation API process SIGKILLed, then started again',
        whileDown: Object.fromEntries(Object.entries({ ...whileDown, ...others }).map(([name, r]) => [name, `${r.status} in ${r.ms} ms`])),
        servedAgainAfterRestartMs: recoveredMs,
        processStartToFirst200Ms: Date.now() - restartedAt,
      }),
    );
  }, 60_000);

  it('answers 503 when its connections are reset mid-request, and 504 when it is slower than the upstream timeout', async () => {
    link.setLatency(200);
    // Reset once the request is on its way (held by the latency), not after a guessed time.
    const arrived = link.clientData();
    const inFlight = threadRead();
    await arrived;
    link.resetAll();
    const reset = await inFlight;
    link.setLatency(0);
    expectUnavailable(reset);

    link.setLatency(UPSTREAM_TIMEOUT_MS + 500);
    const slow = await threadRead();
    link.setLatency(0);
    expectError(slow, 504, 'gateway_timeout');
    expect(slow.ms).toBeLessThan(HANG_MS);

    const recoveredMs = await until(async () => (await threadRead()).status === 200, 'a normal answer', WAIT_MS);
    console.log(
      '[fault figures]',
      JSON.stringify({
        fault: 'gateway-to-conversation connections reset / slowed',
        resetMidRequest: `${reset.status} in ${reset.ms} ms`,
        slowerThanTimeout: `${slow.status} in ${slow.ms} ms (UPSTREAM_TIMEOUT_MS ${UPSTREAM_TIMEOUT_MS})`,
        normalAgainAfterMs: recoveredMs,
      }),
    );
  }, 30_000);
});

describe('a dependent service unreachable while a user or an application is deleted', () => {
  /** Rows of the application in conversation and notification, and its purge requests. */
  const rowsOf = (applicationId: string) => applicationRows(system, applicationId);
  /** Deletions of the application recorded in identity and not carried into every service yet. */
  const pendingDeletions = (applicationId: string) =>
    count(system, `SELECT count(*)::int AS n FROM identity.outbox WHERE application_id = $1 AND attempts > 0`, [applicationId]);
  const asCustomer = async () => customerToken(system.customer.id, system.customer.secret);

  /** An application with Ann and Bob in g1, three messages of Ann in thread vt, and a notification from Ann to Bob. */
  async function seededApplication(name: string): Promise<TestApplication> {
    const victim = await createApplication(system, name);
    expect((await call('PUT', '/v1/users/ann', { name: 'Ann' }, victim)).status).toBe(200);
    expect((await call('PUT', '/v1/users/bob', { name: 'Bob' }, victim)).status).toBe(200);
    expect((await call('PUT', '/v1/groups/g1', { name: 'G1', members: ['ann', 'bob'] }, victim)).status).toBe(200);
    await until(async () => (await call('GET', '/v1/threads?limit=1', undefined, victim)).status === 200, 'the conversation process', WAIT_MS);
    for (const text of ['one', 'two', 'three']) {
      const posted = await call('POST', '/v1/threads/vt/messages', {
        authorID: 'ann',
        content: [{ type: 'p', children: [{ text }] }],
        createThread: { groupID: 'g1', location: { page: 'vt' }, url: 'https://example.com', name: 'vt' },
      }, victim);
      expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    }
    const notified = await call('POST', '/v1/notifications', { actor_id: 'ann', recipient_id: 'bob', template: '{{actor}} wrote', url: 'https://example.com', type: 'url' }, victim);
    expect(notified.status, JSON.stringify(notified.body)).toBe(200);
    expect(await rowsOf(victim.id)).toEqual({ threads: 1, messages: 3, notifications: 1, purgeRequests: 0 });
    return victim;
  }

  it('of a user: answers 503, and finishes by itself once the service is back, without a repeat', async () => {
    const victim = await seededApplication('user deleted while notification is down');
    const notificationsOfBob = async () => (await call('GET', '/v1/users/bob/notifications', undefined, victim)).body.pagination.total;

    notificationLink.down();
    const failed = await call('DELETE', '/v1/users/ann', { permanently_delete: true }, victim);
    expectUnavailable(failed);
    // Identity's part committed: Ann is gone; notification has not been told yet, and the
    // deletion waits in identity's outbox (the worker's relay fails to reach notification too).
    expectError(await call('GET', '/v1/users/ann', undefined, victim), 401, 'user_not_found');
    expect(await pendingDeletions(victim.id)).toBe(1);
    expect(await notificationsOfBob()).toBe(1);

    await notificationLink.accept();
    const finishedMs = await until(async () => (await notificationsOfBob()) === 0, "the relay to reach notification", WAIT_MS);
    await until(async () => (await pendingDeletions(victim.id)) === 0, 'the outbox entry to be handled', WAIT_MS);
    await waitForQueuesIdle(system);
    expect(await rowsOf(victim.id)).toEqual({ threads: 0, messages: 0, notifications: 0, purgeRequests: 0 });
    expect((await call('GET', '/v1/threads/vt', undefined, victim)).status).toBe(404);
    console.log('[fault figures]', JSON.stringify({ fault: 'notification unreachable while a user was deleted', finishedAfterServiceBackMs: finishedMs }));
  }, 60_000);

  it('of an application: answers 503, refuses it at once, and purges everything once the service is back, without a repeat', async () => {
    const victim = await seededApplication('application deleted while notification is down');

    notificationLink.down();
    const failed = await request(gatewayUrl, 'DELETE', `/v1/applications/${victim.id}`, { token: await asCustomer(), body: { secret: victim.secret } });
    expectError(failed, 503, 'service_unavailable');
    expect(failed.headers.get('retry-after')).toBe('1');
    // Gone for its customer and its tokens at once; its notification is not purged yet.
    expectError(await request(gatewayUrl, 'GET', `/v1/applications/${victim.id}`, { token: await asCustomer() }), 401, 'application_not_found');
    expect((await call('GET', '/v1/threads/vt', undefined, victim)).status).toBe(401);
    expect(await pendingDeletions(victim.id)).toBe(1);
    expect((await rowsOf(victim.id)).notifications).toBe(1);

    await notificationLink.accept();
    const purgedMs = await until(async () => (await rowsOf(victim.id)).notifications === 0, 'the relay and the purge', WAIT_MS);
    await until(async () => (await pendingDeletions(victim.id)) === 0, 'the outbox entry to be handled', WAIT_MS);
    await waitForQueuesIdle(system);
    expect(await rowsOf(victim.id)).toEqual({ threads: 0, messages: 0, notifications: 0, purgeRequests: 0 });
    console.log('[fault figures]', JSON.stringify({ fault: 'notification unreachable while an application was deleted', purgedAfterServiceBackMs: purgedMs }));
  }, 60_000);
});
