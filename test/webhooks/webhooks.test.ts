/**
 * The webhooks context through the gateway: registering webhooks, delivering recorded events to
 * receivers that verify them with the original SDK, retries and final failures, the delivery log
 * and its manual retry, and tenant isolation. Events are handed over as the services' relays do
 * (the internal endpoint); which actions record which events is tested with those actions.
 */
import { randomUUID } from 'node:crypto';
import { createInternalClient, webhooksInternal } from '@collab/shared';
import { until } from '@collab/shared/devkit';
import { validateWebhookSignature } from '@cord-sdk/server';
import { afterEach, describe, expect, it } from 'vitest';
import { asCustomer, createApplication, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import type { TestSystem } from '../support/system.js';
import { systemWithReceiver, WebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver.js';

let system: TestSystem;
let appA: TestApplication;
let appB: TestApplication;
let receiver: WebhookReceiver;
const secrets = new Map<string, string>();

systemWithReceiver(secrets, async (started) => {
  ({ system, receiver } = started);
  appA = await createApplication(system, 'A');
  appB = await createApplication(system, 'B');
  for (const app of [appA, appB]) secrets.set(app.id, app.secret);
});

afterEach(() => receiver.answerWith({ status: 200 }));

const registerPath = (app: TestApplication, prefix = 'applications') => `/v1/${prefix}/${app.id}/webhooks`;

/** Hands events to the webhooks service as a relay does; returns their ids. */
async function recordEvents(app: TestApplication, events: { id?: string; type: 'thread-message-added' | 'notification-created'; payload: object }[]) {
  const client = createInternalClient({ baseUrl: system.serviceUrls.webhooks, internalToken: system.env.INTERNAL_TOKEN, service: 'webhooks' });
  const withIds = events.map((event) => ({ id: event.id ?? randomUUID(), type: event.type, payload: event.payload }));
  const answer = await client.call('POST', webhooksInternal.recordEvents.path, { applicationId: app.id, requestId: randomUUID(), body: { events: withIds } });
  return { ids: withIds.map((event) => event.id), answer: webhooksInternal.recordEvents.response.parse(answer) };
}

/** A receiver path of its own per test, so that each test reads only its own requests. */
async function registerPathOnReceiver(app: TestApplication, events: string[] = ['thread-message-added', 'notification-created']) {
  const path = `/${randomUUID()}`;
  const response = await app.client.post(registerPath(app), { url: `${receiver.url}${path}`, events });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return { path, url: `${receiver.url}${path}`, webhookID: response.body.webhookID as string };
}

/** An application of its own per test, so that one test's registrations never receive another's events. */
async function freshApp() {
  const app = await createApplication(system, 'fresh');
  secrets.set(app.id, app.secret);
  return app;
}

const at = (path: string) => (request: ReceivedWebhook) => request.path === path;

async function deliveriesOf(app: TestApplication, eventId: string) {
  const response = await app.client.get(`/v1/webhooks/deliveries?limit=1000`);
  expect(response.status).toBe(200);
  return (response.body.deliveries as { eventID: string }[]).filter((delivery) => delivery.eventID === eventId) as any[];
}

/** Waits until the event's deliveries are all in one of `statuses`. */
async function settled(app: TestApplication, eventId: string, statuses = ['succeeded', 'failed']) {
  let deliveries: any[] = [];
  await until(
    async () => {
      deliveries = await deliveriesOf(app, eventId);
      return deliveries.length > 0 && deliveries.every((delivery) => statuses.includes(delivery.status));
    },
    `the deliveries of ${eventId} to be ${statuses.join(' or ')}`,
    20_000,
  );
  return deliveries;
}

describe('registering webhooks', () => {
  it('creates with 201 and a cord: id, and registering the same URL again keeps the id and takes the new events', async () => {
    const url = `${receiver.url}/${randomUUID()}`;
    const first = await appA.client.post(registerPath(appA), { url, events: ['thread-message-added'] });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      success: true,
      message: `Successfully created webhook with id: ${first.body.webhookID}`,
      webhookID: expect.stringMatching(/^cord:[0-9a-f-]{36}$/),
    });
    const again = await appA.client.post(registerPath(appA, 'projects'), { url, events: ['notification-created'] });
    expect(again.status).toBe(201);
    expect(again.body.webhookID).toBe(first.body.webhookID);
    const listed = await appA.client.get(registerPath(appA));
    expect(listed.body).toContainEqual({ id: first.body.webhookID, url, events: ['notification-created'] });
  });

  it('refuses URLs that are not http or https, and unknown event types, naming the field', async () => {
    expectError(await appA.client.post(registerPath(appA), { url: 'ftp://example.com/x', events: [] }), 400, 'invalid_field', /url/);
    const unknownType = await appA.client.post(registerPath(appA), { url: 'https://example.com/x', events: ['message-deleted'] });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.message).toMatch(/events/);
    expectError(await appA.client.post(registerPath(appA), { url: 'https://example.com/x' }), 400, 'missing_field');
  });

  it('deletes only the caller’s registration, answering the same either way', async () => {
    const { webhookID, url } = await registerPathOnReceiver(appA);
    const byB = await appB.client.delete(`${registerPath(appB)}/${webhookID}`);
    expect(byB.body).toEqual({ success: true, message: `You have successfully deleted webhook: ${webhookID}`, deleted: webhookID });
    expect((await appA.client.get(registerPath(appA))).body.map((row: { url: string }) => row.url)).toContain(url);
    expect((await appA.client.delete(`${registerPath(appA)}/${webhookID}`)).status).toBe(200);
    expect((await appA.client.get(registerPath(appA))).body.map((row: { url: string }) => row.url)).not.toContain(url);
    expectError(await appA.client.delete(`${registerPath(appA)}/not-a-webhook-id`), 400, 'invalid_request', 'Invalid request.');
  });
});

describe('delivering events', () => {
  it('signs each delivery so that the original SDK accepts it, with the event id and attempt number', async () => {
    const appA = await freshApp();
    const { path } = await registerPathOnReceiver(appA);
    const payload = { threadID: 't-1', content: [{ type: 'p', children: [{ text: 'héllo 😀' }] }] };
    const { ids } = await recordEvents(appA, [{ type: 'thread-message-added', payload }]);
    const [delivered] = await receiver.waitFor(at(path));
    expect(delivered.error).toBeNull();
    expect(delivered.verified).toBe(true);
    expect(delivered.body).toMatchObject({ type: 'thread-message-added', event: payload, threadID: 't-1', applicationID: appA.id, projectID: appA.id });
    expect(delivered.headers['x-cord-event-id']).toBe(ids[0]);
    expect(delivered.headers['x-cord-delivery-attempt']).toBe('1');
    expect(delivered.headers['content-type']).toBe('application/json');
    // The same bytes with one character changed are refused: the check can fail.
    expect(() =>
      validateWebhookSignature(
        delivered.rawBody.replace('t-1', 't-2'),
        delivered.headers['x-cord-timestamp'] as string,
        delivered.headers['x-cord-signature'] as string,
        appA.secret,
      ),
    ).toThrow();
    const [logged] = await settled(appA, ids[0]);
    expect(logged).toMatchObject({ status: 'succeeded', attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptTimestamp: null });
    const detail = await appA.client.get(`/v1/webhooks/deliveries/${logged.id}`);
    expect(detail.body.body).toBe(delivered.rawBody);
  });

  it('records an event once however often a relay hands it over, and sends it once per distinct URL', async () => {
    const appA = await freshApp();
    const { path, url } = await registerPathOnReceiver(appA);
    // The same URL as the application's own event URL as well.
    expect((await asCustomer(system).put(`/v1/applications/${appA.id}`, { eventWebhookURL: url })).status).toBe(200);
    const id = randomUUID();
    await recordEvents(appA, [{ id, type: 'notification-created', payload: { n: 1 } }]);
    const again = await recordEvents(appA, [{ id, type: 'notification-created', payload: { n: 1 } }]);
    expect(again.answer.deliveries).toBe(0);
    await settled(appA, id);
    expect(await deliveriesOf(appA, id)).toHaveLength(1);
    // Setting the URL sent it the verification handshake too; the event itself arrived once.
    expect(receiver.received.filter((request) => at(path)(request) && request.headers['x-cord-event-id'] === id)).toHaveLength(1);
    expect((await asCustomer(system).put(`/v1/applications/${appA.id}`, { eventWebhookURL: null })).status).toBe(200);
  });

  it('goes only to registrations of the event’s type', async () => {
    const appA = await freshApp();
    const { path } = await registerPathOnReceiver(appA, ['notification-created']);
    const { ids } = await recordEvents(appA, [{ type: 'thread-message-added', payload: {} }]);
    const marker = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    await receiver.waitFor(at(path));
    expect(receiver.received.filter(at(path)).map((request) => request.headers['x-cord-event-id'])).toEqual(marker.ids);
    expect(await deliveriesOf(appA, ids[0])).toEqual([]);
  });

  it('retries after a 500 until the receiver answers 200, with the same event id and counting attempts', async () => {
    const appA = await freshApp();
    const { path } = await registerPathOnReceiver(appA);
    let calls = 0;
    receiver.answerWith((request) => (request.path === path && ++calls <= 2 ? { status: 500 } : { status: 200 }));
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: { retry: true } }]);
    const requests = await receiver.waitFor(at(path), 3);
    expect(requests.map((request) => request.headers['x-cord-event-id'])).toEqual([ids[0], ids[0], ids[0]]);
    expect(requests.map((request) => request.headers['x-cord-delivery-attempt'])).toEqual(['1', '2', '3']);
    expect(requests.every((request) => request.verified)).toBe(true);
    // Each attempt is signed anew.
    expect(new Set(requests.map((request) => request.headers['x-cord-signature'])).size).toBe(3);
    const [logged] = await settled(appA, ids[0]);
    expect(logged).toMatchObject({ status: 'succeeded', attempts: 3, lastStatusCode: 200 });
  });

  it('fails for good on a 400, without retrying', async () => {
    const appA = await freshApp();
    const { path } = await registerPathOnReceiver(appA);
    receiver.answerWith((request) => (request.path === path ? { status: 400 } : { status: 200 }));
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    const [logged] = await settled(appA, ids[0]);
    expect(logged).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 400, nextAttemptTimestamp: null });
    expect(logged.lastError).toMatch(/400/);
    expect(receiver.received.filter(at(path))).toHaveLength(1);
  });

  it('keeps trying while the receiver is down and delivers once it is back', async () => {
    const appA = await freshApp();
    const down = await new WebhookReceiver((id) => secrets.get(id)).start();
    const url = `${down.url}/down`;
    expect((await appA.client.post(registerPath(appA), { url, events: ['notification-created'] })).status).toBe(201);
    await down.stop();
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    // At least two refused attempts, logged with the error and no status code.
    let logged: any;
    await until(
      async () => {
        [logged] = await deliveriesOf(appA, ids[0]);
        return logged?.attempts >= 2;
      },
      'two refused attempts in the delivery log',
      15_000,
    );
    expect(logged).toMatchObject({ status: 'pending', lastStatusCode: null });
    expect(logged.lastError).toMatch(/ECONNREFUSED|refused/i);
    await down.start();
    const [delivered] = await down.waitFor((request) => request.path === '/down');
    expect(delivered.verified).toBe(true);
    expect(Number(delivered.headers['x-cord-delivery-attempt'])).toBeGreaterThan(2);
    expect((await settled(appA, ids[0]))[0].status).toBe('succeeded');
    await down.stop();
  });

  it('counts an attempt the receiver does not answer within 10 s as failed, and retries it', async () => {
    const appA = await freshApp();
    const { path } = await registerPathOnReceiver(appA);
    let calls = 0;
    receiver.answerWith((request) => (request.path === path && ++calls === 1 ? 'hang' : { status: 200 }));
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    const requests = await receiver.waitFor(at(path), 2, 25_000);
    expect(requests.map((request) => request.headers['x-cord-delivery-attempt'])).toEqual(['1', '2']);
    expect(requests[1].at - requests[0].at).toBeGreaterThanOrEqual(9_000);
    expect((await settled(appA, ids[0]))[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
  }, 40_000);

  it('refuses to register an address the outbound guard refuses, naming the rule and the setting', async () => {
    const appA = await freshApp();
    // 10.0.0.0/8 is private and not in this system's OUTBOUND_ALLOWED_CIDRS (127.0.0.0/8).
    const response = await appA.client.post(registerPath(appA), { url: 'http://10.1.2.3/hook', events: ['notification-created'] });
    expectError(
      response,
      400,
      'invalid_field',
      "url 'http://10.1.2.3/hook' is refused: 10.1.2.3 is a private address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range (e.g. 10.1.2.3/32).",
    );
    const byName = await appA.client.post(registerPath(appA), { url: 'http://metadata.internal.invalid/hook', events: [] });
    // A name that does not resolve (yet) is not the guard's rule: accepted, its deliveries say why they fail.
    expect(byName.status).toBe(201);
    expect((await appA.client.get(registerPath(appA))).body.map((row: { url: string }) => row.url)).toEqual(['http://metadata.internal.invalid/hook']);
  });

  it('still refuses at delivery an address stored before the rule (as an imported registration is), and logs why', async () => {
    const appA = await freshApp();
    await system.sql.query(`INSERT INTO webhooks.registrations (id, application_id, url, events) VALUES ($1, $2, $3, $4)`, [
      randomUUID(),
      appA.id,
      'http://10.1.2.3/hook',
      ['notification-created'],
    ]);
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    let logged: any;
    await until(
      async () => {
        [logged] = await deliveriesOf(appA, ids[0]);
        return logged?.attempts >= 1 && Boolean(logged.lastError);
      },
      'a refused attempt with its error in the delivery log',
      10_000,
    );
    expect(logged).toMatchObject({ lastStatusCode: null, lastError: expect.stringMatching(/10\.1\.2\.3 is a private address.*OUTBOUND_ALLOWED_CIDRS/) });
    expect((await appA.client.delete(`${registerPath(appA)}/${(await appA.client.get(registerPath(appA))).body.find((row: { url: string }) => row.url === 'http://10.1.2.3/hook').id}`)).status).toBe(200);
  });
});

describe('the delivery log', () => {
  it('sends a delivery again on request: same event id, the next attempt number, a fresh signature', async () => {
    const appA = await freshApp();
    const { path } = await registerPathOnReceiver(appA);
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    const [logged] = await settled(appA, ids[0]);
    const retried = await appA.client.post(`/v1/webhooks/deliveries/${logged.id}/retry`);
    expect(retried.body).toEqual({ success: true, message: `Delivery ${logged.id} queued.` });
    const requests = await receiver.waitFor(at(path), 2);
    expect(requests[1].headers['x-cord-event-id']).toBe(ids[0]);
    expect(requests[1].headers['x-cord-delivery-attempt']).toBe('2');
    expect(requests[1].verified).toBe(true);
  });

  it("lists a delivery's attempts newest first, with each answer or error and its timing", async () => {
    const appA = await freshApp();
    const { path } = await registerPathOnReceiver(appA);
    let calls = 0;
    receiver.answerWith((request) => (request.path === path && ++calls <= 2 ? { status: 503 } : { status: 200 }));
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    const [logged] = await settled(appA, ids[0]);
    const answer = await appA.client.get(`/v1/webhooks/deliveries/${logged.id}/attempts`);
    expect(answer.status).toBe(200);
    const attempts = answer.body.attempts as { attempt: number; startedTimestamp: string; durationMs: number }[];
    expect(attempts).toMatchObject([
      { attempt: 3, status: 'succeeded', statusCode: 200, error: null },
      { attempt: 2, status: 'pending', statusCode: 503, error: expect.stringMatching(/^HTTP 503/) },
      { attempt: 1, status: 'pending', statusCode: 503, error: expect.stringMatching(/^HTTP 503/) },
    ]);
    for (const attempt of attempts) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
    const started = attempts.map((attempt) => Date.parse(attempt.startedTimestamp));
    expect([...started].sort((a, b) => b - a)).toEqual(started);
    expect(started[2]).toBeGreaterThanOrEqual(Date.parse(logged.createdTimestamp));
    const latest = await appA.client.get(`/v1/webhooks/deliveries/${logged.id}/attempts?limit=1`);
    expect(latest.body.attempts.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([3]);
  });

  it('lists a replayed attempt after the first one, and refuses an unknown delivery', async () => {
    const appA = await freshApp();
    const { path } = await registerPathOnReceiver(appA);
    receiver.answerWith((request) => (request.path === path ? { status: 410 } : { status: 200 }));
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    const [logged] = await settled(appA, ids[0]);
    receiver.answerWith({ status: 200 });
    expect((await appA.client.post(`/v1/webhooks/deliveries/${logged.id}/retry`)).status).toBe(200);
    await settled(appA, ids[0], ['succeeded']);
    const { body } = await appA.client.get(`/v1/webhooks/deliveries/${logged.id}/attempts`);
    expect(body.attempts).toMatchObject([
      { attempt: 2, status: 'succeeded', statusCode: 200 },
      { attempt: 1, status: 'failed', statusCode: 410 },
    ]);
    expectError(await appA.client.get(`/v1/webhooks/deliveries/${randomUUID()}/attempts`), 404, 'not_found');
  });

  it('pages newest first and filters by status, type and url', async () => {
    const appA = await freshApp();
    const { url } = await registerPathOnReceiver(appA);
    const { ids } = await recordEvents(appA, [1, 2, 3].map((n) => ({ type: 'notification-created' as const, payload: { n } })));
    for (const id of ids) await settled(appA, id);
    const query = encodeURIComponent(JSON.stringify({ url, status: 'succeeded', type: 'notification-created' }));
    const first = await appA.client.get(`/v1/webhooks/deliveries?limit=2&filter=${query}`);
    expect(first.body.pagination.total).toBe(3);
    expect(first.body.deliveries).toHaveLength(2);
    const second = await appA.client.get(`/v1/webhooks/deliveries?limit=2&filter=${query}&token=${encodeURIComponent(first.body.pagination.token)}`);
    expect(second.body.pagination.token).toBeNull();
    const seen = [...first.body.deliveries, ...second.body.deliveries].map((delivery: { eventID: string }) => delivery.eventID);
    expect(seen).toEqual([...ids].reverse());
  });

  it('is the application’s own: another application neither reads nor retries its deliveries', async () => {
    const appA = await freshApp();
    await registerPathOnReceiver(appA);
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: {} }]);
    const [logged] = await settled(appA, ids[0]);
    expectError(await appB.client.get(`/v1/webhooks/deliveries/${logged.id}`), 404, 'not_found');
    expectError(await appB.client.post(`/v1/webhooks/deliveries/${logged.id}/retry`), 404, 'not_found');
    expectError(await appB.client.get(`/v1/webhooks/deliveries/${logged.id}/attempts`), 404, 'not_found');
    const listedByB = await appB.client.get('/v1/webhooks/deliveries?limit=1000');
    expect(listedByB.body.deliveries.map((delivery: { id: string }) => delivery.id)).not.toContain(logged.id);
  });
});

describe('log retention', () => {
  it('prunes events and their deliveries past WEBHOOK_LOG_DAYS, and keeps newer ones', async () => {
    const { createWebhooksDataSource } = await import('../../services/webhooks/src/data-source.js');
    const { pendingDeliveries } = await import('../../services/webhooks/src/jobs/delivery.jobs.js');
    const appA = await freshApp();
    await registerPathOnReceiver(appA);
    const { ids } = await recordEvents(appA, [{ type: 'notification-created', payload: { old: true } }]);
    await settled(appA, ids[0]);
    const db = createWebhooksDataSource(system.env.DATABASE_URL, 1);
    await db.initialize();
    try {
      // A week and a day ago, with the default retention of 7 days.
      await db.query(`UPDATE webhooks.events SET created_at = now() - interval '8 days' WHERE id = $1`, [ids[0]]);
      const recent = await recordEvents(appA, [{ type: 'notification-created', payload: { recent: true } }]);
      await settled(appA, recent.ids[0]);
      await pendingDeliveries(db, 7);
      expect(await deliveriesOf(appA, ids[0])).toEqual([]);
      expect(await deliveriesOf(appA, recent.ids[0])).toHaveLength(1);
    } finally {
      await db.destroy();
    }
  });
});
