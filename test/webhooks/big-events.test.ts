/**
 * Nothing lost: the events of the biggest message the API accepts fit every internal hop and reach
 * the receiver; an event the webhooks service refuses (413) is not retried in a loop but kept as a
 * failed outbox entry, with its reason in `outbox_entries_failed` and `npm run outbox -- failed`,
 * and `npm run outbox -- retry --all` delivers it once the refusal is gone.
 */
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { processMetrics } from '@collab/shared';
import { until } from '@collab/shared/devkit';
import { describe, expect, it } from 'vitest';
import { mention, newThread, postMessage } from '../support/activity.js';
import { createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { startOutboxRelays, type OutboxRelays } from '../support/outbox-relays.js';
import { seedTeam } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
let relays: OutboxRelays | undefined;
const secrets = new Map<string, string>();

systemWithReceiver(secrets, (started) => ({ system, receiver } = started), {
  outboxRelay: false,
  beforeStop: () => relays?.stop(),
});

const execFileAsync = promisify(execFile);

/** `npm run outbox -- <args>` on this system's database; answers what it printed. */
async function outboxCommand(...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, ['shared/dist/outbox-main.js', ...args], { env: { ...process.env, DATABASE_URL: system.env.DATABASE_URL } });
  return stdout;
}

async function freshApp(): Promise<{ app: TestApplication; path: string }> {
  const app = await createApplication(system, 'big events');
  secrets.set(app.id, app.secret);
  await seedTeam(app);
  return { app, path: await receiver.register(app, ['thread-message-added', 'notification-created']) };
}

/** About `megabytes` MB of text in paragraphs of 1 MB. */
const bigContent = (megabytes: number, marker: string) =>
  Array.from({ length: megabytes }, (_, index) => ({ type: 'p', children: [{ text: `${marker} ${index} ${'x'.repeat(1024 * 1024)}` }] }));

describe('a 4 MB message', () => {
  it('has its thread-message-added and notification-created events delivered', async () => {
    relays = await startOutboxRelays(system);
    try {
      const { app, path } = await freshApp();
      const { threadId } = await newThread(app);
      const content = [...bigContent(4, 'big'), { type: 'p', children: [mention('bob')] }];
      const messageId = await postMessage(app, threadId, { id: uniqueId('m'), authorID: 'ann', content });
      const [added] = await receiver.waitFor((request) => request.path === path && (request.body as any)?.type === 'thread-message-added' && (request.body as any)?.messageID === messageId, 1, 120_000);
      expect(added.verified).toBe(true);
      expect(added.rawBody.length).toBeGreaterThan(4 * 1024 * 1024);
      expect((added.body as any).message.content).toEqual(content);
      const [created] = await receiver.waitFor(
        (request) => request.path === path && (request.body as any)?.type === 'notification-created' && (request.body as any)?.event?.recipientUserID === 'bob',
        1,
        120_000,
      );
      expect(created.verified).toBe(true);
    } finally {
      await relays.stop();
      relays = undefined;
    }
  }, 150_000);
});

describe('an event the webhooks service refuses', () => {
  it('is kept as a failed entry with its reason, counted and listed, and delivered after a retry', async () => {
    // A webhooks service that takes events for every application and refuses every hand-over for its size.
    const refusing = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const refused = req.method === 'POST';
        res.writeHead(refused ? 413 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(refused ? { error: 'payload_too_large', message: 'Request body is larger than 40 MB.' } : { subscribed: true }));
      });
    });
    refusing.listen(0, '127.0.0.1');
    await once(refusing, 'listening');
    relays = await startOutboxRelays(system, { WEBHOOKS_URL: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}` });
    const metrics = processMetrics();
    for (const processor of relays.processors) metrics.watchOutbox(processor);
    try {
      const { app, path } = await freshApp();
      const { threadId } = await newThread(app);
      const messageId = await postMessage(app, threadId, { authorID: 'ann', content: [{ type: 'p', children: [{ text: 'refused' }] }] });
      await until(async () => /outbox_entries_failed\{schema="conversation"\} [1-9]/.test(await metrics.metrics()), 'the refused entry counted as failed', 60_000, 100);
      const failed = await outboxCommand('failed');
      expect(failed).toMatch(/^conversation\t[0-9a-f-]{36}\tmessage\.added\tapplication [0-9a-f-]{36}\tattempts 1\t\S+\tRequest body is larger than 40 MB\.$/m);

      // The refusal is gone (the relays reach the real webhooks service): the retry delivers it.
      await relays.stop();
      relays = await startOutboxRelays(system);
      expect(await outboxCommand('retry', '--all')).toMatch(/^[1-9]\d* failed outbox entries queued again\.$/m);
      await receiver.waitFor((request) => request.path === path && (request.body as any)?.messageID === messageId, 1, 60_000);
      expect(await outboxCommand('failed')).toContain('No failed outbox entries.');
    } finally {
      await relays?.stop();
      relays = undefined;
      refusing.close();
      refusing.closeAllConnections();
    }
  }, 90_000);
});
