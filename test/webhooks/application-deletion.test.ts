/**
 * Deleting an application removes its delivery log (decision 45), and nothing is recorded for it
 * afterwards: not for messages created while the deletion ran, and not for an event a relay hands
 * over late to a webhooks process whose cached answer from identity still knows the application.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createInternalClient, createLogger, webhooksInternal } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { loadWebhooksConfig } from '../../services/webhooks/src/config.js';
import { createWebhooksService } from '../../services/webhooks/src/service.js';
import { paragraph, postMessage } from '../support/activity.js';
import { asCustomer, createApplication, uniqueId, type TestApplication } from '../support/client.js';
import { waitForQueuesIdle } from '../support/queues.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

systemWithReceiver(secrets, (started) => ({ system, receiver } = started));

/** An application whose own URL (eventWebhookURL) and a registration both take thread-message-added. */
async function appWithWebhooks(): Promise<TestApplication> {
  const app = await createApplication(system, 'doomed');
  secrets.set(app.id, app.secret);
  await receiver.register(app, ['thread-message-added']);
  const own = await asCustomer(system).put(`/v1/applications/${app.id}`, { eventWebhookURL: `${receiver.url}/${randomUUID()}` });
  expect(own.status, JSON.stringify(own.body)).toBe(200);
  expect((await app.client.put('/v1/users/ann', { name: 'Ann' })).status).toBe(200);
  expect((await app.client.put('/v1/groups/team', { name: 'team', members: ['ann'] })).status).toBe(200);
  return app;
}

/** The application's rows in the webhooks schema, and whether its deletion is kept as completed. */
async function webhooksState(applicationId: string) {
  const { rows } = await system.sql.query(
    `SELECT (SELECT count(*)::int FROM webhooks.events WHERE application_id = $1) AS events,
            (SELECT count(*)::int FROM webhooks.deliveries WHERE application_id = $1) AS deliveries,
            (SELECT count(*)::int FROM webhooks.registrations WHERE application_id = $1) AS registrations,
            (SELECT count(*)::int FROM webhooks.application_purges WHERE application_id = $1 AND completed_at IS NOT NULL) AS tombstones`,
    [applicationId],
  );
  return rows[0];
}

/** Until the conversation outbox has handed over (or dropped) every entry of the application. */
async function outboxDrained(applicationId: string) {
  await expect
    .poll(async () => (await system.sql.query('SELECT count(*)::int AS n FROM conversation.outbox WHERE application_id = $1', [applicationId])).rows[0].n, {
      timeout: 30_000,
      interval: 50,
    })
    .toBe(0);
}

const allQueues = ['conversation-purge', 'notification-purge', 'webhooks-purge', 'webhooks-delivery'] as const;

describe('deleting an application with webhooks', () => {
  it('leaves no event, delivery or registration, even for messages created while it was deleted', async () => {
    const app = await appWithWebhooks();
    const first = await postMessage(app, uniqueId('thread'), { authorID: 'ann', content: paragraph('before'), createThread: newThread() });
    await receiver.waitFor((request) => (request.body as { messageID?: string } | null)?.messageID === first, 2);

    // Messages keep being created while the deletion runs; some land before it, some are refused after.
    let deleting = true;
    const writers = Array.from({ length: 4 }, async () => {
      while (deleting) await app.client.post(`/v1/threads/${uniqueId('thread')}/messages`, { authorID: 'ann', content: paragraph('during'), createThread: newThread() });
    });
    const deleted = await asCustomer(system).delete(`/v1/applications/${app.id}`, { secret: app.secret });
    deleting = false;
    await Promise.all(writers);
    expect(deleted.status).toBe(200);

    await outboxDrained(app.id);
    await waitForQueuesIdle(system, [...allQueues], 30_000, { failedIsError: false });
    expect(await webhooksState(app.id)).toEqual({ events: 0, deliveries: 0, registrations: 0, tombstones: 1 });
  });

  it('records nothing for an event handed over after the deletion to a process that still has the application cached', async () => {
    const app = await appWithWebhooks();
    // A second webhooks API on its own Redis prefix: it never hears identity's invalidations, as a
    // replica that missed one, and still knows the application once it has read it.
    const stale = await createWebhooksService(loadWebhooksConfig({ ...system.env, REDIS_PREFIX: `${system.env.REDIS_PREFIX}:stale` }), createLogger('test', 'silent'));
    const server = http.createServer(stale.app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const address = server.address() as { port: number };
      const client = createInternalClient({ baseUrl: `http://127.0.0.1:${address.port}`, internalToken: system.env.INTERNAL_TOKEN, service: 'webhooks' });
      const handOver = async () => {
        const events = [{ id: randomUUID(), type: 'thread-message-added' as const, payload: { kind: 'late' } }];
        const answer = await client.call('POST', webhooksInternal.recordEvents.path, { applicationId: app.id, requestId: randomUUID(), body: { events } });
        return webhooksInternal.recordEvents.response.parse(answer).deliveries;
      };
      // Before the deletion it records (and so caches the application).
      expect(await handOver()).toBe(2);

      expect((await asCustomer(system).delete(`/v1/applications/${app.id}`, { secret: app.secret })).status).toBe(200);
      await waitForQueuesIdle(system, [...allQueues], 30_000, { failedIsError: false });
      expect(await webhooksState(app.id)).toEqual({ events: 0, deliveries: 0, registrations: 0, tombstones: 1 });

      expect(await handOver()).toBe(0);
      expect(await webhooksState(app.id)).toEqual({ events: 0, deliveries: 0, registrations: 0, tombstones: 1 });
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await stale.close();
    }
  });
});

function newThread() {
  const id = randomUUID();
  return { groupID: 'team', location: { page: id }, url: `https://example.com/${id}`, name: `Thread ${id}` };
}
