/**
 * The conversation worker's relay while the notification service is unreachable: a new message's
 * notifications and its event wait (the notifications come first), and once the service is back
 * the notifications are created once and each event is sent once.
 */
import { expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { mentioning, newThread, recordedEvents, settled, storedNotifications } from '../support/activity.js';
import { createApplication } from '../support/client.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { startOutboxRelays, type OutboxRelays } from '../support/outbox-relays.js';
import { seedTeam } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
let notificationLink: FaultProxy;
let relays: OutboxRelays | undefined;
const secrets = new Map<string, string>();

// The relays run here: the conversation worker's reaches notification through a fault proxy.
systemWithReceiver(secrets, async (started) => {
  ({ system, receiver } = started);
  notificationLink = await startFaultProxy({ port: Number(new URL(system.serviceUrls.notification).port) });
  relays = await startOutboxRelays(system, { NOTIFICATION_URL: `http://127.0.0.1:${notificationLink.port}` });
}, {
  outboxRelay: false,
  beforeStop: async () => {
    await relays?.stop();
    notificationLink?.close();
  },
});

it('creates the notifications once and sends each event once after the notification service was down', async () => {
  const app = await createApplication(system, 'relay retry');
  secrets.set(app.id, app.secret);
  await seedTeam(app);
  const path = await receiver.register(app, ['thread-message-added', 'notification-created']);

  notificationLink.down();
  const { messageId } = await newThread(app, { content: mentioning('hi', 'bob') });
  await until(async () => {
    const { rows } = await system.sql.query(`SELECT attempts FROM conversation.outbox WHERE application_id = $1`, [app.id]);
    return rows.length === 1 && rows[0].attempts >= 2;
  }, 'the relay to fail twice');
  // Nothing yet: the event waits for the notifications it names.
  expect(await storedNotifications(system, app.id)).toEqual([]);
  expect(await recordedEvents(system, app.id, 'thread-message-added')).toEqual([]);

  await notificationLink.accept();
  await settled(system, app.id);
  const rows = await storedNotifications(system, app.id);
  expect(rows.map((row) => [row.kind, row.recipient])).toEqual([['reply', 'bob']]);
  // Both delivered, each at its first attempt: nothing else is on its way.
  await until(async () => {
    const { rows: deliveries } = await system.sql.query(`SELECT status, attempts FROM webhooks.deliveries WHERE application_id = $1`, [app.id]);
    return deliveries.length === 2 && deliveries.every((delivery) => delivery.status === 'succeeded' && delivery.attempts === 1);
  }, 'both deliveries to succeed');
  const requests = receiver.received.filter((received) => received.path === path);
  const sent = requests.map((received) => [(received.body as any).type, received.headers['x-cord-event-id']]);
  const [added] = await recordedEvents(system, app.id, 'thread-message-added');
  const [created] = await recordedEvents(system, app.id, 'notification-created');
  expect(sent.sort()).toEqual([
    ['notification-created', created.id],
    ['thread-message-added', added.id],
  ]);
  expect(added.payload.messageID).toBe(messageId);
  expect(added.payload.usersToNotify.map((user: { id: string }) => user.id)).toEqual(['bob']);
  expect(created.payload.id).toBe(rows[0].id);
});
