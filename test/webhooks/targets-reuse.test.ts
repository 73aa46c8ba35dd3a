/**
 * The relays reuse the webhooks service's answer to "does anyone receive this application's events
 * of this type?" while the application's webhook-targets version is unchanged
 * (shared/src/application-versions.ts). A receiver added after events nobody received must get the
 * very next one. Each test first has a relay find nobody (an event relayed, the outboxes settled),
 * then adds a receiver and expects the next event there.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mentioning, newThread, paragraph, postMessage, settled } from '../support/activity.js';
import { asCustomer, createApplication, type TestApplication } from '../support/client.js';
import { seedTeam } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

systemWithReceiver(secrets, (started) => ({ system, receiver } = started));

/** An application of its own with ann, bob and carl in `team`, and a thread whose first message nobody received. */
async function appWithoutReceivers(): Promise<{ app: TestApplication; threadId: string }> {
  const app = await createApplication(system, 'targets');
  secrets.set(app.id, app.secret);
  await seedTeam(app);
  const { threadId } = await newThread(app, { content: mentioning('hello', 'bob') });
  await settled(system, app.id);
  return { app, threadId };
}

/** The SDK's parse of a request: the event type and its payload. */
const parsed = (request: ReceivedWebhook) => request.body as { type: string; event: Record<string, unknown> } | null;
const eventOf = (path: string, type: string) => (request: ReceivedWebhook) => request.path === path && parsed(request)?.type === type;

describe('a receiver added after events nobody received', () => {
  it('registered as a webhook, gets the next message', async () => {
    const { app, threadId } = await appWithoutReceivers();
    const path = await receiver.register(app, ['thread-message-added']);
    const messageId = await postMessage(app, threadId, { authorID: 'ann', content: paragraph('after the registration') });
    const [event] = await receiver.waitFor(eventOf(path, 'thread-message-added'));
    expect(parsed(event)?.event.messageID).toBe(messageId);
  });

  it("set as the application's own URL, gets the next message", async () => {
    const { app, threadId } = await appWithoutReceivers();
    const path = `/${randomUUID()}`;
    const updated = await asCustomer(system).put(`/v1/applications/${app.id}`, { eventWebhookURL: `${receiver.url}${path}` });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const messageId = await postMessage(app, threadId, { authorID: 'ann', content: paragraph('after the new URL') });
    const [event] = await receiver.waitFor(eventOf(path, 'thread-message-added'));
    expect(parsed(event)?.event.messageID).toBe(messageId);
  });

  it('registered for notifications, gets the next notification', async () => {
    const { app, threadId } = await appWithoutReceivers();
    const path = await receiver.register(app, ['notification-created']);
    await postMessage(app, threadId, { authorID: 'ann', content: mentioning('again', 'carl') });
    const [event] = await receiver.waitFor(eventOf(path, 'notification-created'));
    expect(parsed(event)?.event.recipientUserID).toBe('carl');
  });
});
