/**
 * The application's own webhook URL (`eventWebhookURL`) and the event types it receives
 * (`eventWebhookSubscriptions`), set with a customer token through the gateway: the signed
 * URL-verification handshake a new URL must pass before anything is written, which URLs are
 * accepted at all, and which recorded events then reach the URL. Receivers are real servers on
 * 127.0.0.1 (exempted with OUTBOUND_ALLOWED_CIDRS) that check every request with the original SDK.
 */
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createInternalClient, identityInternal, webhooksInternal } from '@collab/shared';
import { validateWebhookSignature } from '@cord-sdk/server';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '@collab/shared/devkit';
import { asCustomer, createApplication, type ApiClient, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';

const VERIFICATION_MESSAGE = 'Please respond with a HTTP 200 status code.';

let system: TestSystem;
let customer: ApiClient;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

/** What the system logs at warn and above, one parsed line each (the operator's view of a failed handshake). */
const logged: Record<string, unknown>[] = [];
const logStream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString().split('\n')) if (line.trim() !== '') logged.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

systemWithReceiver(
  secrets,
  (started) => {
    ({ system, receiver } = started);
    customer = asCustomer(system);
  },
  { logger: pino({ level: 'warn' }, logStream) },
);

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

describe('the URL-verification handshake of PUT /v1/applications/<ID>', () => {
  it('posts one url-verification event, signed with the application secret, and stores the URL once it is answered with 200', async () => {
    const app = await freshApp();
    const other = await freshApp('other');
    const { path, url } = receiverPath();
    const response = await customer.put(appPath(app), { eventWebhookURL: url });
    expect(response.status).toBe(200);
    expect(response.body).toEqual(updated(app));

    // The PUT answers only after the handshake, so the request is already there.
    const requests = receiver.received.filter(at(path));
    expect(requests).toHaveLength(1);
    const [handshake] = requests;
    expect(handshake.error).toBeNull();
    expect(handshake.verified).toBe(true);
    expect(handshake.headers['content-type']).toBe('application/json');
    expect(JSON.parse(handshake.rawBody)).toEqual({
      type: 'url-verification',
      timestamp: handshake.headers['x-cord-timestamp'],
      applicationID: app.id,
      projectID: app.id,
      event: { message: VERIFICATION_MESSAGE },
      message: VERIFICATION_MESSAGE,
    });
    // Signed with this application's secret: another one's does not validate it.
    expect(() =>
      validateWebhookSignature(handshake.rawBody, handshake.headers['x-cord-timestamp'] as string, handshake.headers['x-cord-signature'] as string, other.secret),
    ).toThrow('Unable to verify webhook signature');

    expect((await read(app)).eventWebhookURL).toBe(url);
    const listed = (await customer.get('/v1/applications')).body.find((application: { id: string }) => application.id === app.id);
    expect(listed.eventWebhookURL).toBe(url);
  });

  it('does the same through the /v1/projects alias', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    expect((await customer.put(appPath(app, 'projects'), { eventWebhookURL: url })).body).toEqual(updated(app));
    expect(receiver.received.filter(at(path))).toHaveLength(1);
    expect((await read(app)).eventWebhookURL).toBe(url);
  });

  it('follows redirects to the final answer', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    const target = receiverPath();
    receiver.answerWith((request) => (request.path === path ? { status: 307, headers: { location: target.path } } : { status: 200 }));
    expect((await customer.put(appPath(app), { eventWebhookURL: url })).body).toEqual(updated(app));
    // 307 repeats the signed POST at the new location.
    const [redirected] = receiver.received.filter(at(target.path));
    expect(redirected.verified).toBe(true);
    expect((await read(app)).eventWebhookURL).toBe(url);
  });

  it.each([201, 204, 500])('a receiver answering %i → 400 webhook_url_not_verified, and nothing of the request is written', async (status) => {
    const app = await freshApp('before');
    const before = await read(app);
    const { path, url } = receiverPath();
    receiver.answerWith({ status });
    const response = await customer.put(appPath(app), {
      name: 'after',
      iconURL: 'https://example.com/icon.png',
      eventWebhookURL: url,
      eventWebhookSubscriptions: ['notification-created'],
    });
    expectError(response, 400, 'webhook_url_not_verified', `Request to '${url}' failed with status ${status} but status 200 expected.`);
    expect(receiver.received.filter(at(path))).toHaveLength(1);
    expect(await read(app)).toEqual(before);
  });

  it('a receiver that never answers → the 3-second timeout message, nothing written', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    receiver.answerWith('hang');
    const response = await customer.put(appPath(app), { name: 'after', eventWebhookURL: url });
    expectError(response, 400, 'webhook_url_not_verified', `URL verification aborted: no response from '${url}' within 3 seconds.`);
    expect(receiver.received.filter(at(path))).toHaveLength(1);
    expect(await read(app)).toMatchObject({ name: 'hooked', eventWebhookURL: null });
  });

  it('a port with nothing listening → "Cannot verify webhook URL" and why, nothing written', async () => {
    const app = await freshApp();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/hook`;
    const response = await customer.put(appPath(app), { name: 'after', eventWebhookURL: url });
    expectError(response, 400, 'webhook_url_not_verified', `Cannot verify webhook URL '${url}': Request failed: connect ECONNREFUSED 127.0.0.1:${port}.`);
    expect(await read(app)).toMatchObject({ name: 'hooked', eventWebhookURL: null });
  });

  it('a private address that is not exempted → "Cannot verify webhook URL", the rule and the setting, nothing written', async () => {
    const app = await freshApp();
    const url = 'http://10.1.2.3/x';
    const response = await customer.put(appPath(app), { name: 'after', eventWebhookURL: url });
    expectError(
      response,
      400,
      'webhook_url_not_verified',
      `Cannot verify webhook URL '${url}': 10.1.2.3 is a private address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range (e.g. 10.1.2.3/32).`,
    );
    // The operator sees it too, with the application and the reason.
    expect(logged).toContainEqual(
      expect.objectContaining({ msg: 'eventWebhookURL not verified', applicationID: app.id, url, reason: response.body.message }),
    );
    expect(await read(app)).toMatchObject({ name: 'hooked', eventWebhookURL: null });
  });

  it('more than 3 redirects → "Cannot verify webhook URL" and why', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    receiver.answerWith({ status: 307, headers: { location: path } });
    const response = await customer.put(appPath(app), { eventWebhookURL: url });
    expectError(response, 400, 'webhook_url_not_verified', `Cannot verify webhook URL '${url}': More than 3 redirects.`);
    // The first request and 3 redirects followed.
    expect(receiver.received.filter(at(path))).toHaveLength(4);
    expect((await read(app)).eventWebhookURL).toBeNull();
  });
});

describe('changes of the URL without a handshake', () => {
  it('the URL already stored is not called again, and the rest of the request is written', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    await setUrl(app, url);
    receiver.answerWith({ status: 500 });
    expect((await customer.put(appPath(app), { name: 'renamed', eventWebhookURL: url })).body).toEqual(updated(app));
    expect(receiver.received.filter(at(path))).toHaveLength(1);
    expect(await read(app)).toMatchObject({ name: 'renamed', eventWebhookURL: url });
  });

  it('null clears the URL without a call', async () => {
    const app = await freshApp();
    const { path, url } = receiverPath();
    await setUrl(app, url);
    receiver.answerWith({ status: 500 });
    expect((await customer.put(appPath(app), { eventWebhookURL: null })).body).toEqual(updated(app));
    expect(receiver.received.filter(at(path))).toHaveLength(1);
    expect((await read(app)).eventWebhookURL).toBeNull();
  });

  it('POST /v1/applications refuses an address the outbound guard refuses, naming the rule and the setting', async () => {
    const before = (await customer.get('/v1/applications')).body.length;
    const response = await customer.post('/v1/applications', { name: 'refused', eventWebhookURL: 'http://169.254.169.254/latest' });
    expectError(
      response,
      400,
      'invalid_field',
      "eventWebhookURL 'http://169.254.169.254/latest' is refused: 169.254.169.254 is a link-local address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range (e.g. 169.254.169.254/32).",
    );
    expect((await customer.get('/v1/applications')).body).toHaveLength(before);
  });

  it('POST /v1/applications stores the URL without a call', async () => {
    const { path, url } = receiverPath();
    receiver.answerWith({ status: 500 });
    const created = await customer.post('/v1/applications', { name: 'created hooked', eventWebhookURL: url });
    expect(created.status).toBe(200);
    expect(receiver.received.filter(at(path))).toHaveLength(0);
    const read = await customer.get(`/v1/applications/${created.body.applicationID}`);
    expect(read.body.eventWebhookURL).toBe(url);
  });
});

describe('which webhook URLs are accepted', () => {
  it.each(['ftp://example.com/hook', 'mailto:hooks@example.com'])('%s → 400 invalid_field naming eventWebhookURL, on POST and PUT', async (url) => {
    const message = 'eventWebhookURL must be an http or https URL.';
    const before = (await customer.get('/v1/applications')).body.length;
    expectError(await customer.post('/v1/applications', { name: 'refused', eventWebhookURL: url }), 400, 'invalid_field', message);
    expect((await customer.get('/v1/applications')).body).toHaveLength(before);

    const app = await freshApp();
    expectError(await customer.put(appPath(app), { name: 'after', eventWebhookURL: url }), 400, 'invalid_field', message);
    expect(await read(app)).toMatchObject({ name: 'hooked', eventWebhookURL: null });
  });
});

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
