/**
 * The conversation worker process (services/conversation/dist/main-worker.js) queues a new
 * message's preview job from its outbox relay and drains the link-preview queue besides its purge
 * queue: a message's preview appears with no in-process worker or relay, its /metrics counts the
 * fetch and both queues, and SIGTERM stops it cleanly.
 */
import { expect, it } from 'vitest';
import { freePort } from '@collab/shared/devkit';
import { uniqueId, type TestApplication } from '../support/client.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import type { TestSystem } from '../support/system.js';
import { previewsDrained } from './drained.js';
import { html, systemWithPages, type PageServer } from './page-server.js';

let system: TestSystem;
let app: TestApplication;
let pages: PageServer;

// No in-process worker: only the spawned process can fetch the page.
systemWithPages('on', (started) => ({ system, app, pages } = started), { workers: false, beforeStop: killAll });

it('previews a link, counts the fetch on /metrics, and stops cleanly on SIGTERM', async () => {
  const metricsPort = await freePort();
  const worker = spawnServiceProcess('conversation', 'main-worker', { ...system.env, METRICS_PORT: String(metricsPort), LOG_LEVEL: 'silent' });
  const url = pages.page('/from-the-process', html('<title>From the worker process</title>'));
  const threadID = uniqueId('thread');
  const created = await app.client.post(`/v1/threads/${threadID}/messages`, {
    authorID: 'ann',
    content: [{ type: 'p', children: [{ text: url }] }],
    createThread: { groupID: 'team', location: { page: threadID }, url: 'https://example.com/t', name: 'Thread' },
  });
  expect(created.status).toBe(200);
  await previewsDrained(system);

  const message = await app.client.get(`/v1/threads/${threadID}/messages/${created.body.messageID}`);
  expect(message.body.attachments).toEqual([
    { type: 'link_preview', id: expect.any(String), url, imageURL: null, title: 'From the worker process', description: null },
  ]);
  const scrape = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  // The completion is counted once the worker hears of it, just after the queue saw it.
  await expect.poll(scrape).toContain('bullmq_jobs_completed_total{queue="conversation-link-previews"} 1');
  const metrics = await scrape();
  expect(metrics).toContain('link_preview_fetches_total{outcome="preview"} 1');
  expect(metrics).toContain('bullmq_jobs_completed_total{queue="conversation-purge"} 0');
  expect(await stopProcess(worker)).toBe(0);
});
