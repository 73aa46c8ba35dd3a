/**
 * The application's own webhook URL (`eventWebhookURL`) and the event types it receives
 * (`eventWebhookSubscriptions`), set with a customer token through the gateway: which recorded
 * events reach the URL. Receivers are real servers on 127.0.0.1 (exempted with
 * OUTBOUND_ALLOWED_CIDRS) that check every request with the original SDK.
 */
import { randomUUID } from 'node:crypto';
import { createInternalClient, identityInternal, webhooksInternal } from '@collab/shared';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { asCustomer, createApplication, type ApiClient, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { WebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver.js';

let system: TestSystem;
let customer: ApiClient;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

beforeAll(async () => {
  system = await startSystem({ env: { OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8' } });
  customer = asCustomer(system);
  receiver = await new WebhookReceiver((id) => secrets.get(id)).start();
});

afterAll(async () => {
  await receiver?.stop();
  await system?.stop();
});

afterEach(() => receiver.answerWith({ status: 200 }));

/** An application of its own per test, so that no test sees another's URL, subscriptions or events. */
async function freshApp(name = 'hooked'): Promise<TestApplication> {
  const app = await createApplication(system, name);
  secrets.set(app.id, app.secret);
  return app;
}

/** A receiver path of its own per test, so that each test reads only the requests it caused. */
function receiverPath() {
  const path = `/${randomUUID()}`;
  return { path, url: `${receiver.url}${path}` };
}

const at = (path: string) => (request: ReceivedWebhook) => request.path === path;
const appPath = (app: TestApplication, prefix = 'applications') => `/v1/${prefix}/${app.id}`;

async function read(app: TestApplication) {
  const response = await customer.get(appPath(app));
  expect(response.status).toBe(200);
  return response.body;
}

function updated(app: TestApplication) {
  return { success: true, message: `You successfully updated application ${app.id}` };
}

/** Sets the URL (the receiver answers the handshake with 200) and optionally its subscriptions. */
async function setUrl(app: TestApplication, url: string, eventWebhookSubscriptions?: string[]) {
  const response = await customer.put(appPath(app), { eventWebhookURL: url, eventWebhookSubscriptions });
  expect(response.body).toEqual(updated(app));
}

/** Hands events to the webhooks service as a relay does; answers how many deliveries it created. */
async function recordEvents(app: TestApplication, types: ('thread-message-added' | 'notification-created')[]) {
  const client = createInternalClient({ baseUrl: system.serviceUrls.webhooks, internalToken: system.env.INTERNAL_TOKEN, service: 'webhooks' });
  const events = types.map((type) => ({ id: randomUUID(), type, payload: { kind: type } }));
  const answer = await client.call('POST', webhooksInternal.recordEvents.path, { applicationId: app.id, requestId: randomUUID(), body: { events } });
  return webhooksInternal.recordEvents.response.parse(answer).deliveries;
}

describe('eventWebhookSubscriptions', () => {
  it('is null until set, is stored and returned by both GETs and given to the webhooks service, and null clears it', async () => {
    const identity = createInternalClient({ baseUrl: system.serviceUrls.identity, internalToken: system.env.INTERNAL_TOKEN, service: 'identity' });
    const credentials = async (id: string) =>
      identityInternal.applicationCredentials.response.parse(
        await identity.call('GET', identityInternal.applicationCredentials.path(id), { requestId: randomUUID() }),
      ).eventWebhookSubscriptions;

    const app = await freshApp();
    expect((await read(app)).eventWebhookSubscriptions).toBeNull();
    expect(await credentials(app.id)).toBeNull();

    const created = await customer.post('/v1/applications', { name: 'subscribed', eventWebhookSubscriptions: ['notification-created'] });
    const id = created.body.applicationID;
    expect((await customer.get(`/v1/applications/${id}`)).body.eventWebhookSubscriptions).toEqual(['notification-created']);

    const both = ['thread-message-added', 'notification-created'];
    expect((await customer.put(`/v1/projects/${id}`, { eventWebhookSubscriptions: both })).status).toBe(200);
    const listed = (await customer.get('/v1/applications')).body.find((application: { id: string }) => application.id === id);
    expect(listed.eventWebhookSubscriptions).toEqual(both);
    expect(await credentials(id)).toEqual(both);

    expect((await customer.put(`/v1/applications/${id}`, { eventWebhookSubscriptions: null })).status).toBe(200);
    expect((await customer.get(`/v1/applications/${id}`)).body.eventWebhookSubscriptions).toBeNull();
    expect(await credentials(id)).toBeNull();
  });

  it('an unknown event type → 400 invalid_field naming the field, on POST and PUT', async () => {
    const subscriptions = ['notification-created', 'message-deleted'];
    const before = (await customer.get('/v1/applications')).body.length;
    expectError(await customer.post('/v1/applications', { name: 'refused', eventWebhookSubscriptions: subscriptions }), 400, 'invalid_field', /eventWebhookSubscriptions/);
    expect((await customer.get('/v1/applications')).body).toHaveLength(before);

    const app = await freshApp();
    expectError(await customer.put(appPath(app), { eventWebhookSubscriptions: subscriptions }), 400, 'invalid_field', /eventWebhookSubscriptions/);
    expect((await read(app)).eventWebhookSubscriptions).toBeNull();
  });
});

describe('events reaching the application URL', () => {
  it('with subscriptions ["notification-created"], a notification-created event reaches it and a thread-message-added one does not', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    await setUrl(app, url, ['notification-created']);
    // The URL is the application's only target: an event it does not receive creates no delivery.
    expect(await recordEvents(app, ['thread-message-added'])).toBe(0);
    expect(await recordEvents(app, ['notification-created'])).toBe(1);
    const [delivered] = await receiver.waitFor((request) => at(path)(request) && request.body?.type === 'notification-created');
    expect(delivered.verified).toBe(true);
    expect(receiver.received.filter((request) => at(path)(request) && request.body?.type === 'thread-message-added')).toEqual([]);
  });

  it('with subscriptions never set, both event types reach it', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    await setUrl(app, url);
    expect(await recordEvents(app, ['thread-message-added', 'notification-created'])).toBe(2);
    const delivered = await receiver.waitFor((request) => at(path)(request) && request.body?.type !== 'url-verification', 2);
    expect(delivered.map((request) => request.body?.type).sort()).toEqual(['notification-created', 'thread-message-added']);
    expect(delivered.every((request) => request.verified)).toBe(true);
  });

  it('after a PUT changes the subscriptions, the next events follow the new ones', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    await setUrl(app, url, ['thread-message-added']);
    // The webhooks service now holds the settings in its cache (kept for a minute unless invalidated).
    expect(await recordEvents(app, ['thread-message-added'])).toBe(1);
    expect(await recordEvents(app, ['notification-created'])).toBe(0);

    expect((await customer.put(appPath(app), { eventWebhookSubscriptions: ['notification-created'] })).body).toEqual(updated(app));
    // The invalidation travels over Redis: give it a moment, far less than the cache's lifetime.
    const deadline = Date.now() + 5_000;
    let stale = await recordEvents(app, ['thread-message-added']);
    while (stale > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      stale = await recordEvents(app, ['thread-message-added']);
    }
    expect(stale).toBe(0);
    expect(await recordEvents(app, ['notification-created'])).toBe(1);
    await receiver.waitFor((request) => at(path)(request) && request.body?.type === 'notification-created');
  });
});
