/**
 * Recorded events survive the faults between recording and delivery, with real worker processes:
 * the webhooks worker SIGKILLed while a receiver holds an attempt open, and Redis down while a
 * message's event is recorded and handed over. Every recorded event arrives, with its one
 * X-Cord-Event-ID. Needs the build (`npm test` builds).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { createApplication, type TestApplication } from '../support/client.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { putEach } from '../support/seed.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

let redis: PrivateRedis;
let system: TestSystem;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

beforeAll(async () => {
  redis = await startPrivateRedis();
  // No in-process workers or relays: the worker processes of each test do that work.
  system = await startSystem({ workers: false, env: { REDIS_URL: redis.url, OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
  receiver = await new WebhookReceiver((id) => secrets.get(id)).start();
}, 60_000);

afterAll(async () => {
  killAll();
  await receiver?.stop();
  await system?.stop();
  await redis?.stop();
});

/** Worker processes as `npm start` runs them; a lock that expires quickly, so a killed job is taken over soon. */
const startWorker = (service: 'webhooks' | 'conversation') =>
  spawnServiceProcess(service, 'main-worker', { ...system.env, JOB_LOCK_MS: '1500', OUTBOX_POLL_MS: '500', LOG_LEVEL: 'silent', METRICS_PORT: '0' });

async function appWithWebhook(): Promise<{ app: TestApplication; path: string }> {
  const app = await createApplication(system, 'faults');
  secrets.set(app.id, app.secret);
  return { app, path: await receiver.register(app, ['thread-message-added']) };
}

async function deliveries(app: TestApplication) {
  return (await app.client.get('/v1/webhooks/deliveries')).body.deliveries as { status: string; attempts: number; eventID: string }[];
}

describe('delivery faults', () => {
  it('a webhooks worker SIGKILLed while an attempt is open: another worker sends the event again, with the same event id', async () => {
    const { app, path } = await appWithWebhook();
    await putEach(app, '/v1/users', [['ann', { name: 'Ann' }]]);
    await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann'] }]]);
    let calls = 0;
    receiver.answerWith((request) => (request.path === path && ++calls === 1 ? 'hang' : { status: 200 }));
    const relay = startWorker('conversation');
    const doomed = startWorker('webhooks');
    try {
      const created = await app.client.post('/v1/threads/t1/messages', {
        authorID: 'ann',
        content: [{ type: 'p', children: [{ text: 'hello' }] }],
        createThread: { groupID: 'team', location: { page: 't1' }, url: 'https://example.com', name: 't1' },
      });
      expect(created.status).toBe(200);
      const [open] = await receiver.waitFor((request) => request.path === path);
      await stopProcess(doomed, 'SIGKILL');
      const survivor = startWorker('webhooks');
      try {
        const requests = await receiver.waitFor((request) => request.path === path, 2);
        expect(requests.every((request) => request.verified)).toBe(true);
        expect(new Set(requests.map((request) => request.headers['x-cord-event-id']))).toEqual(new Set([open.headers['x-cord-event-id']]));
        await until(async () => (await deliveries(app)).some((delivery) => delivery.status === 'succeeded'), 'the delivery to succeed');
        const [delivery] = await deliveries(app);
        expect(delivery.eventID).toBe(open.headers['x-cord-event-id']);
      } finally {
        await stopProcess(survivor);
      }
    } finally {
      await stopProcess(relay);
      receiver.answerWith({ status: 200 });
    }
  }, 60_000);

  it('Redis down while a message is created: its event is recorded, and delivered once Redis is back', async () => {
    const { app, path } = await appWithWebhook();
    await putEach(app, '/v1/users', [['ann', { name: 'Ann' }]]);
    await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann'] }]]);
    const relay = startWorker('conversation');
    const sender = startWorker('webhooks');
    try {
      await redis.stop();
      // Writing a message needs PostgreSQL only; its event waits in the outbox and the log.
      const created = await app.client.post('/v1/threads/t2/messages', {
        id: 'while-redis-is-down',
        authorID: 'ann',
        content: [{ type: 'p', children: [{ text: 'during the outage' }] }],
        createThread: { groupID: 'team', location: { page: 't2' }, url: 'https://example.com', name: 't2' },
      });
      expect(created.status).toBe(200);
      await until(async () => (await deliveries(app)).length === 1, 'the event to be recorded for delivery', 20_000);
      expect(receiver.received.filter((request) => request.path === path)).toEqual([]);
      await redis.start();
      const [delivered] = await receiver.waitFor((request) => request.path === path, 1, 30_000);
      expect(delivered.verified).toBe(true);
      expect((delivered.body as { messageID?: string }).messageID).toBe('while-redis-is-down');
      await until(async () => (await deliveries(app))[0]?.status === 'succeeded', 'the delivery to succeed');
      expect(receiver.received.filter((request) => request.path === path)).toHaveLength(1);
    } finally {
      await Promise.all([stopProcess(relay), stopProcess(sender)]);
    }
  }, 90_000);
});
