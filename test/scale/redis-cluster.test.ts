/**
 * The whole system on a Redis Cluster of three primaries on loopback: batches, deletion cascades,
 * webhook deliveries and the rate limit work through the gateway, and each queue's keys live in
 * one slot while different queues land on different nodes.
 */
import { checkRedisEviction, createRedis, queuePrefix, Redis } from '@collab/shared';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paragraph, postMessage, settled } from '../support/activity.js';
import { asCustomer, createApplication, request, uniqueId, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { startRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster.js';
import { applicationRows } from '../support/rows.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** Requests one application may make at once; one more a minute, so nothing is earned back meanwhile. */
const BURST = 40;

let cluster: PrivateRedisCluster;
let system: TestSystem;
let receiver: WebhookReceiver;
/** One plain connection per primary, to see which node holds which keys. */
let nodes: { port: number; redis: Redis }[] = [];
const secrets = new Map<string, string>();

beforeAll(async () => {
  cluster = await startRedisCluster();
  nodes = cluster.ports.map((port) => ({ port, redis: new Redis(port, '127.0.0.1') }));
  system = await startSystem({
    env: { REDIS_URL: cluster.url, OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8', RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: String(BURST) },
  });
  receiver = await new WebhookReceiver((id) => secrets.get(id)).start();
});

afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
  for (const { redis } of nodes) redis.disconnect();
  await cluster?.stop();
});

async function seededApplication(name: string): Promise<TestApplication> {
  const app = await createApplication(system, name);
  secrets.set(app.id, app.secret);
  for (const userId of ['ann', 'bob']) expect((await app.client.put(`/v1/users/${userId}`, { name: userId })).status).toBe(200);
  expect((await app.client.put('/v1/groups/team', { name: 'Team', members: ['ann', 'bob'] })).status).toBe(200);
  return app;
}

function newThread(app: TestApplication, authorID = 'ann') {
  const threadId = uniqueId('thread');
  return postMessage(app, threadId, {
    authorID,
    content: paragraph(`hello from ${authorID}`),
    createThread: { groupID: 'team', location: { page: threadId }, url: `https://example.com/${threadId}`, name: threadId },
  });
}

/** The keys of this system on each primary (its own connection: a cluster's SCAN reads one node). */
async function keysByNode(): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  for (const { port, redis } of nodes) {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, page] = await redis.scan(cursor, 'MATCH', `${system.env.REDIS_PREFIX}:*`, 'COUNT', 1000);
      keys.push(...page);
      cursor = next;
    } while (cursor !== '0');
    found.set(port, keys);
  }
  return found;
}

describe('on a Redis Cluster', () => {
  it('applies a batch through its queue', async () => {
    const app = await createApplication(system, 'batch');
    const users = [uniqueId('batch-user'), uniqueId('batch-user')];
    const response = await app.client.post('/v1/batch', { users: users.map((id) => ({ id, name: id })), groups: [{ id: 'crew', name: 'Crew', members: users }] });
    expect({ status: response.status, body: response.body }).toEqual({
      status: 200,
      body: { success: true, message: 'You successfully batch updated 2 users and 1 group' },
    });
    expect((await app.client.get(`/v1/users/${users[0]}`)).status).toBe(200);
    expect((await app.client.get('/v1/groups/crew')).body.members.sort()).toEqual([...users].sort());
  });

  it('purges a deleted application in every service, and its credentials stop working at once', async () => {
    const doomed = await seededApplication('doomed');
    await newThread(doomed, 'ann');
    await newThread(doomed, 'bob');
    await settled(system, doomed.id);
    expect(await applicationRows(system, doomed.id)).toMatchObject({ threads: 2, messages: 2 });
    const deleted = await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret });
    expect(deleted.status).toBe(200);
    // The gateway's cached credentials are dropped on identity's invalidation (pub/sub on the cluster).
    expect((await doomed.client.get('/v1/users/ann')).status).toBe(401);
    await waitForQueuesIdle(system);
    expect(await applicationRows(system, doomed.id)).toEqual({ threads: 0, messages: 0, notifications: 0, purgeRequests: 0 });
  });

  it('delivers a webhook event to a receiver', async () => {
    const app = await seededApplication('webhooks');
    const path = await receiver.register(app, ['thread-message-added']);
    const messageId = await newThread(app);
    const [event] = await receiver.waitFor((received) => received.path === path && (received.body as { messageID?: string })?.messageID === messageId);
    expect(event.verified).toBe(true);
    expect(event.body).toMatchObject({ type: 'thread-message-added', applicationID: app.id, messageID: messageId });
  });

  it('limits an application to its burst, then answers 429', async () => {
    const app = await createApplication(system, 'limited');
    const token = await serverToken(app.id, app.secret);
    const statuses: number[] = [];
    for (let index = 0; index < BURST; index++) statuses.push((await request(system.url, 'GET', '/v1/users', { token })).status);
    expect(statuses).toEqual(Array(BURST).fill(200));
    expectError(await request(system.url, 'GET', '/v1/users', { token }), 429, 'rate_limited');
  });

  it("keeps each queue's keys on one node, in the slot of its hash tag, and spreads the queues over the nodes", async () => {
    const queues = ['identity-batch', 'conversation-purge', 'notification-purge', 'webhooks-delivery'];
    const byNode = await keysByNode();
    const nodesOfQueue = new Map<string, Set<number>>();
    for (const [port, keys] of byNode)
      for (const queue of queues)
        if (keys.some((key) => key.startsWith(`${queuePrefix(system.env.REDIS_PREFIX, queue)}:`))) {
          nodesOfQueue.set(queue, (nodesOfQueue.get(queue) ?? new Set()).add(port));
        }
    // Every queue used above has keys, each on exactly one node: the one serving its tag's slot.
    const slots = await nodes[0].redis.cluster('SLOTS');
    for (const queue of queues) {
      expect([...(nodesOfQueue.get(queue) ?? [])], queue).toHaveLength(1);
      const slot = Number(await nodes[0].redis.cluster('KEYSLOT', `{${queue}}`));
      const owner = slots.find(([first, last]) => slot >= first && slot <= last)![2][1];
      expect(nodesOfQueue.get(queue)!.has(owner), `${queue} (slot ${slot})`).toBe(true);
    }
    const used = new Set(queues.flatMap((queue) => [...nodesOfQueue.get(queue)!]));
    expect(used.size).toBeGreaterThan(1);
  });

  describe('the start-up check of the eviction policy', () => {
    const check = async (url: string) => {
      const lines: { level: number; msg: string; node?: string; maxmemoryPolicy?: string }[] = [];
      const redis = createRedis(url, { maxRetriesPerRequest: 1 });
      try {
        await checkRedisEviction(redis, pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }));
      } finally {
        redis.disconnect();
      }
      return lines;
    };

    it('logs an error naming the primary whose maxmemory-policy evicts keys, and nothing when all are noeviction', async () => {
      expect(await check(cluster.url)).toEqual([]);
      const [evicting] = nodes;
      await evicting.redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
      try {
        const lines = await check(cluster.url);
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatchObject({ level: 50, node: `127.0.0.1:${evicting.port}`, maxmemoryPolicy: 'allkeys-lru' });
      } finally {
        await evicting.redis.config('SET', 'maxmemory-policy', 'noeviction');
      }
    });

    it('warns, without failing, when Redis refuses CONFIG GET (as managed services do)', async () => {
      // A user that may run every command but CONFIG, on every node.
      for (const { redis } of nodes) await redis.acl('SETUSER', 'no-config', 'on', '>no-config-password', '~*', '&*', '+@all', '-config');
      try {
        const lines = await check(cluster.url.replace('redis+cluster://', 'redis+cluster://no-config:no-config-password@'));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatchObject({ level: 40 });
        expect(lines[0].msg).toMatch(/could not check/);
      } finally {
        for (const { redis } of nodes) await redis.acl('DELUSER', 'no-config');
      }
    });
  });
});
