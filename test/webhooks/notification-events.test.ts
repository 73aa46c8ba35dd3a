/**
 * `notification-created` events: each notification fires one event (a receiver verifying with the
 * original SDK accepts it) carrying the recipient's list item.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedEvents } from '../support/activity.js';
import { createApplication, type TestApplication } from '../support/client.js';
import { putEach, seedTeam } from '../support/seed.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

let system: TestSystem;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

beforeAll(async () => {
  system = await startSystem({ env: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
  receiver = await new WebhookReceiver((id) => secrets.get(id)).start();
});

afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

/** An application of its own (team: ann, bob, dora, erin; carl outside) with a receiver path for both event types. */
async function freshApp(): Promise<{ app: TestApplication; path: string }> {
  const app = await createApplication(system, 'notification events');
  secrets.set(app.id, app.secret);
  await seedTeam(app);
  await putEach(app, '/v1/users', [['erin', { name: 'Erin', shortName: 'E' }]]);
  await putEach(app, '/v1/groups', [['team', { name: 'team', members: ['ann', 'bob', 'dora', 'erin'] }]]);
  const path = `/${randomUUID()}`;
  const registered = await app.client.post(`/v1/applications/${app.id}/webhooks`, {
    url: `${receiver.url}${path}`,
    events: ['thread-message-added', 'notification-created'],
  });
  expect(registered.status).toBe(201);
  return { app, path };
}

describe('notification-created', () => {
  it('fires for POST /v1/notifications, verified by the SDK, with the list item, the recipient and the notification’s time', async () => {
    const { app, path } = await freshApp();
    const created = await app.client.post('/v1/notifications', {
      actor_id: 'ann',
      recipient_id: 'erin',
      template: '{{actor}} pinged {{recipient}}',
      url: 'https://example.com/x',
      type: 'url',
    });
    expect(created.status).toBe(200);
    const [request] = await receiver.waitFor((received) => received.path === path && (received.body as any)?.type === 'notification-created');
    expect(request.verified).toBe(true);
    const [item] = (await app.client.get('/v1/users/erin/notifications')).body.notifications;
    expect(item.id).toBe(created.body.notificationID);
    const body = request.body as any;
    expect(body.event).toEqual({ ...item, recipientUserID: 'erin' });
    expect(body).toEqual({ type: 'notification-created', applicationID: app.id, projectID: app.id, event: body.event, ...body.event });
    // The notification's own time, spread over the envelope's; the signing time stays in the header.
    expect(body.timestamp).toBe(item.timestamp);
    expect(request.headers['x-cord-timestamp']).toMatch(/^\d+$/);
    const [event] = await recordedEvents(system, app.id, 'notification-created');
    expect(request.headers['x-cord-event-id']).toBe(event.id);
  });
});
