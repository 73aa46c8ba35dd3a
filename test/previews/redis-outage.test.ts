/**
 * Redis unreachable from the conversation worker while messages with links are created and
 * edited: the answers do not depend on it, the relay keeps the outbox entries that could not queue
 * their preview jobs, and once Redis is back (empty, as after a restart without persistence) every
 * one of those messages gets its preview. A real worker process on a private redis-server; the
 * services' own Redis stays up.
 */
import type { ChildProcess } from 'node:child_process';
import { expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { uniqueId, type TestApplication } from '../support/client.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import type { TestSystem } from '../support/system.js';
import { previewsDrained } from './drained.js';
import { html, systemWithPages, type PageServer } from './page-server.js';

let system: TestSystem;
let app: TestApplication;
let pages: PageServer;
let redis: PrivateRedis;
let worker: ChildProcess;

// No in-process worker or relay: the spawned worker, on its own Redis, does both.
systemWithPages('on', async (started) => {
  ({ system, app, pages } = started);
  redis = await startPrivateRedis();
  worker = spawnServiceProcess('conversation', 'main-worker', { ...system.env, REDIS_URL: redis.url, METRICS_PORT: '0', LOG_LEVEL: 'silent' });
}, {
  workers: false,
  beforeStop: async () => {
    killAll();
    await redis?.stop();
  },
});

const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];

async function create(text: string) {
  const threadID = uniqueId('thread');
  const created = await app.client.post(`/v1/threads/${threadID}/messages`, {
    authorID: 'ann',
    content: paragraph(text),
    createThread: { groupID: 'team', location: { page: threadID }, url: 'https://example.com/t', name: 'Thread' },
  });
  expect(created.status).toBe(200);
  return `/v1/threads/${threadID}/messages/${encodeURIComponent(created.body.messageID)}`;
}

const titlesOf = async (path: string) => (await app.client.get(path)).body.attachments.map((attachment: { title: string }) => attachment.title);

/** The relay's failed tries at the conversation outbox's entries of this topic. */
async function failedTries(topic: string): Promise<number[]> {
  const { rows } = await system.sql.query<{ attempts: number }>('SELECT attempts FROM conversation.outbox WHERE topic = $1', [topic]);
  return rows.map((row) => row.attempts);
}

it('previews the messages created and edited while the worker could not reach Redis, once it can', async () => {
  const before = pages.page('/before', html('<title>Before</title>'));
  const during = pages.page('/during', html('<title>During</title>'));
  const added = pages.page('/added', html('<title>Added</title>'));
  const edited = await create(`see ${before}`);
  await previewsDrained(system, redis.url);
  expect(await titlesOf(edited)).toEqual(['Before']);

  await redis.stop();
  const created = await create(`see ${during}`);
  expect((await app.client.put(edited, { content: paragraph(`see ${before} and ${added}`) })).status).toBe(200);
  // The relay tried both entries and kept them for a retry.
  await until(async () => (await failedTries('message.added'))[0] >= 1, 'the relay to fail to queue the new message’s preview job', 15_000);
  await until(async () => (await failedTries('message.links-changed'))[0] >= 1, 'the relay to fail to queue the edited message’s preview job', 15_000);
  expect([pages.hits('/during'), pages.hits('/added')]).toEqual([0, 0]);

  await redis.start();
  await previewsDrained(system, redis.url);
  expect(await titlesOf(created)).toEqual(['During']);
  expect(await titlesOf(edited)).toEqual(['Before', 'Added']);
  expect([pages.hits('/before'), pages.hits('/during'), pages.hits('/added')]).toEqual([1, 1, 1]);
  expect(await stopProcess(worker)).toBe(0);
});
