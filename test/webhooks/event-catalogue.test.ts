/**
 * The webhook event catalogue (shared/src/webhooks/events.ts) describes exactly what receivers
 * get: every body a receiver recorded here, and every event the webhooks service recorded, parses
 * against its type's schema (objects are strict, so a key added to a payload and not to the
 * catalogue fails). The fixture dump holds no webhook payloads, so receivers record them here.
 */
import { DEFAULT_SUBSCRIPTIONS, RECORDED_EVENT_TYPES, WEBHOOK_EVENT_TYPES, WEBHOOK_EVENTS, webhookBodySchema, type WebhookEventType } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { mention, paragraph, postMessage, uploadFile } from '../support/activity.js';
import { asCustomer, createApplication, uniqueId } from '../support/client.js';
import { waitForBackgroundWork } from '../support/queues.js';
import { putEach, seedTeam } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

systemWithReceiver(secrets, (started) => ({ system, receiver } = started));

describe('the webhook event catalogue', () => {
  it('describes every body receivers got and every payload recorded, for each event type', async () => {
    const app = await createApplication(system, 'catalogue');
    secrets.set(app.id, app.secret);
    await seedTeam(app);
    await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann', 'bob', 'dora'] }]]);
    const path = await receiver.register(app, [...RECORDED_EVENT_TYPES]);
    // The application's own URL: setting it sends url-verification.
    const ownPath = `/${uniqueId('own')}`;
    expect((await asCustomer(system).put(`/v1/applications/${app.id}`, { eventWebhookURL: `${receiver.url}${ownPath}` })).status).toBe(200);

    const threadId = uniqueId('thread');
    const fileId = await uploadFile(app, 'ann');
    await postMessage(app, threadId, {
      authorID: 'ann',
      content: [{ type: 'p', children: [{ text: 'see ' }, mention('bob'), { text: ' https://example.com/page' }] }],
      addAttachments: [{ type: 'file', id: fileId }],
      metadata: { n: 1 },
      createThread: { groupID: 'team', location: { page: threadId }, url: `https://example.com/${threadId}`, name: threadId },
    });
    await postMessage(app, threadId, { authorID: 'bob', content: paragraph('a reply') });
    await waitForBackgroundWork(system);

    const bodies = receiver.received.filter((request) => request.path === path || request.path === ownPath).map((request) => request.body as { type: WebhookEventType });
    expect(new Set(bodies.map((body) => body.type))).toEqual(new Set(WEBHOOK_EVENT_TYPES));
    for (const body of bodies) expect(() => webhookBodySchema(body.type).parse(body), JSON.stringify(body)).not.toThrow();

    const { rows } = await system.sql.query<{ type: WebhookEventType; payload: unknown }>(`SELECT type, payload FROM webhooks.events WHERE application_id = $1`, [app.id]);
    expect(new Set(rows.map((row) => row.type))).toEqual(new Set(RECORDED_EVENT_TYPES));
    for (const row of rows) expect(() => WEBHOOK_EVENTS[row.type].payload.parse(row.payload), JSON.stringify(row.payload)).not.toThrow();
  });

  it('refuses a payload with a key the catalogue does not know', () => {
    const parse = () => WEBHOOK_EVENTS['url-verification'].payload.parse({ message: 'hi', extra: 1 });
    expect(parse).toThrow();
  });

  it('derives the default subscriptions from the catalogue', () => {
    expect(DEFAULT_SUBSCRIPTIONS).toEqual(['thread-message-added', 'notification-created']);
  });
});
