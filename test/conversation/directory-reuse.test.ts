/**
 * Conversation reuses identity's answers while the application's directory version is unchanged
 * (shared/src/application-versions.ts). These tests put a link that can be cut between a second
 * conversation service and the real identity: with the link cut, a check it may answer from an
 * earlier answer still passes, and one it has to ask identity about answers 503. That shows when
 * it asks: after every write identity answered (a user, a group's members, a batch), when Redis
 * lost the version, and for a question it was not asked before. cross-context.test.ts checks,
 * against the same reuse, that every such write is seen by the very next request.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, createRedis, INTERNAL_HEADERS, queuePrefix, type RedisClient } from '@collab/shared';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConversationConfig } from '../../services/conversation/src/config.js';
import { createConversationService } from '../../services/conversation/src/service.js';
import { createApplication, request, uniqueId, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;
let redis: RedisClient;
let link: Awaited<ReturnType<typeof cuttableLink>>;
let conversation: Awaited<ReturnType<typeof createConversationService>>;
let conversationServer: Server;
let conversationUrl: string;

const THREAD = 'reuse-thread';
const content = (text: string) => [{ type: 'p', children: [{ text }] }];

// Every batch answers 202 at once, so that the worker's write, not the request's, is what a check must see.
systemWithApplication('directory reuse', async (started) => {
  ({ system, app } = started);
  await app.client.put('/v1/users/ann', { name: 'Ann' });
  await app.client.put('/v1/groups/team', { name: 'Team', members: ['ann'] });
  const first = await app.client.post(`/v1/threads/${THREAD}/messages`, {
    authorID: 'ann',
    content: content('first'),
    createThread: { groupID: 'team', location: { page: 'reuse' }, url: 'https://example.com/reuse', name: 'Reuse' },
  });
  if (first.status !== 200) throw new Error(`thread setup failed: ${JSON.stringify(first.body)}`);
}, { env: { BATCH_WAIT_MS: '0' } });

/** An HTTP link to identity that forwards while up and resets every connection once cut. */
async function cuttableLink(target: string) {
  let up = true;
  const server = http.createServer((req, res) => {
    if (!up) return void req.socket.destroy();
    const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => req.socket.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut() {
      up = false;
      server.closeAllConnections();
    },
    restore() {
      up = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  link = await cuttableLink(system.serviceUrls.identity);
  conversation = await createConversationService(loadConversationConfig({ ...system.env, IDENTITY_URL: link.url }), createLogger('test', 'silent'));
  conversationServer = http.createServer(conversation.app);
  await new Promise<void>((resolve) => conversationServer.listen(0, '127.0.0.1', resolve));
  conversationUrl = `http://127.0.0.1:${(conversationServer.address() as AddressInfo).port}`;
  redis = createRedis(system.env.REDIS_URL, { maxRetriesPerRequest: null });
});

afterAll(async () => {
  conversationServer?.closeAllConnections();
  await new Promise<void>((resolve) => (conversationServer ? conversationServer.close(() => resolve()) : resolve()));
  await conversation?.close();
  await link?.close();
  redis?.disconnect();
});

beforeEach(() => link.restore());

/** A message by `author` in the thread, created by the second conversation service, as the gateway calls it. */
function post(author: string, text = 'hello') {
  return request(conversationUrl, 'POST', `/v1/threads/${THREAD}/messages`, {
    body: { authorID: author, content: content(text) },
    headers: { [INTERNAL_HEADERS.internalToken]: system.env.INTERNAL_TOKEN, [INTERNAL_HEADERS.applicationId]: app.id },
  });
}

/** Posts once with identity reachable (so the answer is filed), then cuts the link. */
async function reusedFor(author: string) {
  expect((await post(author)).status).toBe(200);
  link.cut();
}

describe("identity's answers reused while the directory is unchanged", () => {
  it('a second message by the same author needs no call to identity', async () => {
    await reusedFor('ann');
    for (let i = 0; i < 3; i++) expect((await post('ann', `again ${i}`)).status).toBe(200);
  });

  it('a question not asked before is asked: another author answers 503 while identity is unreachable', async () => {
    await app.client.put('/v1/users/bob', { name: 'Bob', addGroups: ['team'] });
    await reusedFor('ann');
    const response = await post('bob');
    expect(response.status).toBe(503);
    expect(response.body.error).toBe('service_unavailable');
  });

  it('after a user write identity answered, the next check asks identity again', async () => {
    await reusedFor('ann');
    expect((await app.client.put('/v1/users/someone-else', { name: 'Someone' })).status).toBe(200);
    expect((await post('ann')).status).toBe(503);
  });

  it("after a change of the group's members, the next check asks identity again", async () => {
    await reusedFor('ann');
    expect((await app.client.post('/v1/groups/team/members', { add: ['ann'] })).status).toBe(200);
    expect((await post('ann')).status).toBe(503);
  });

  it('after a batch identity applied, the next check asks identity again', async () => {
    await reusedFor('ann');
    const batch = await app.client.post('/v1/batch', { users: [{ id: uniqueId('batched'), name: 'Batched' }] });
    expect(batch.status).toBe(202);
    // The request's own write is its record: the link stays up for the check the worker's write
    // must invalidate again.
    await untilBatchDone(batch.body.jobID);
    expect((await post('ann')).status).toBe(503);
  });

  it('when Redis lost the version (a restart, an eviction), the next check asks identity again', async () => {
    await reusedFor('ann');
    expect(await redis.del(`${system.env.REDIS_PREFIX}:directory-version:${app.id}`)).toBe(1);
    expect((await post('ann')).status).toBe(503);
  });

  it("another application's writes leave the answers reused", async () => {
    await reusedFor('ann');
    const other = await request(system.url, 'PUT', '/v1/users/ann', { body: { name: 'Not this Ann' }, token: await otherApplicationToken() });
    expect(other.status).toBe(200);
    expect((await post('ann')).status).toBe(200);
  });
});

describe('a removed member is refused once the removal has answered', () => {
  it('through the gateway, removal after removal, with the author checked just before each', async () => {
    for (let i = 0; i < 10; i++) {
      const userId = uniqueId('leaver');
      expect((await app.client.put(`/v1/users/${userId}`, { name: 'Leaver', addGroups: ['team'] })).status).toBe(200);
      expect((await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: userId, content: content('still here') })).status).toBe(200);
      const removal = i % 2 === 0 ? app.client.post('/v1/groups/team/members', { remove: [userId] }) : app.client.put(`/v1/users/${userId}`, { removeGroups: ['team'] });
      expect((await removal).status).toBe(200);
      const refused = await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: userId, content: content('gone') });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe('invalid_request');
    }
  });

  it('a user removed by a batch is refused once the batch is done, though checked after the batch was accepted', async () => {
    const userId = uniqueId('batch-leaver');
    await app.client.put(`/v1/users/${userId}`, { name: 'Leaver', addGroups: ['team'] });
    const batches = new Queue('identity-batch', { connection: redis, prefix: queuePrefix(system.env.REDIS_PREFIX, 'identity-batch') });
    // The batch waits in its queue while the member posts again: that check's answer is filed
    // under the version the batch's request left, which only the worker's write replaces.
    await batches.pause();
    try {
      const batch = await app.client.post('/v1/batch', { groups: [{ id: 'team', name: 'Team', members: ['ann', 'bob'] }] });
      expect(batch.status).toBe(202);
      expect((await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: userId, content: content('still here') })).status).toBe(200);
      await batches.resume();
      await untilBatchDone(batch.body.jobID);
    } finally {
      await batches.resume();
      await batches.close();
    }
    const refused = await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID: userId, content: content('gone') });
    expect(refused.status).toBe(400);
  });
});

async function untilBatchDone(jobId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const status = await app.client.get(`/v1/batch/${jobId}`);
    if (status.body.status === 'completed') return;
    if (status.body.status === 'failed') throw new Error(`batch failed: ${JSON.stringify(status.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('batch not done in 10 s');
}

async function otherApplicationToken(): Promise<string> {
  const other = await createApplication(system, 'directory reuse, other');
  return serverToken(other.id, other.secret);
}
