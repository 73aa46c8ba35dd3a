/**
 * Rotating an application's secret (POST /v1/applications/<ID>/secret and its /v1/projects alias)
 * and the operator CLI for the customer who lost one (npm run app). A rotation answers a new
 * secret once; server tokens signed with the previous one keep working for the grace period, then
 * fail with invalid_app_token; webhooks are signed with the new one at once. The CLI runs as real
 * processes (scripts/identity-cli.mjs, as npm run app does) against this file's database, so it
 * needs the build.
 */
import { randomUUID } from 'node:crypto';
import { validateWebhookSignature } from '@cord-sdk/server';
import { describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { ApiClient, asCustomer, createApplication, request, uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { runScript } from '../support/processes.js';
import { waitForBackgroundWork } from '../support/queues.js';
import { applicationRows, count } from '../support/rows.js';
import { seedTeam } from '../support/seed.js';
import type { TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';
import { systemWithReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const HOUR_MS = 3600 * 1000;

let system: TestSystem;
let receiver: WebhookReceiver;
/** The secret each application's events must verify with: its current one. */
const secrets = new Map<string, string>();

systemWithReceiver(secrets, (started) => ({ system, receiver } = started));

async function newApplication(name = 'rotation'): Promise<TestApplication> {
  const app = await createApplication(system, name);
  secrets.set(app.id, app.secret);
  return app;
}

/** A client calling as the application with a server token signed with `secret`. */
const signedWith = (app: TestApplication, secret: string) => new ApiClient(system, () => serverToken(app.id, secret));

const verify = (app: TestApplication, secret: string) => signedWith(app, secret).get('/v1/verify');

function authorize(app: TestApplication, secret: string): Promise<ApiResponse> {
  return serverToken(app.id, secret).then((token) => request(system.url, 'POST', '/v1/authorize', { body: { signed_app_token: token } }));
}

async function rotate(app: TestApplication, prefix: 'applications' | 'projects' = 'applications') {
  const response = await asCustomer(system).post(`/v1/${prefix}/${app.id}/secret`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  secrets.set(app.id, response.body.secret);
  return response.body as { success: boolean; message: string; applicationID: string; secret: string; previousSecretExpires: string | null };
}

/** Runs the operator CLI as `npm run app -- <args>` runs it, with this system's environment. */
function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(
    ['DATABASE_URL', 'REDIS_URL', 'REDIS_PREFIX', 'SECRETS_ENCRYPTION_KEY', 'INTERNAL_TOKEN', 'ACCESS_TOKEN_SECRET', 'FILE_URL_SECRET', 'CONVERSATION_URL', 'NOTIFICATION_URL', 'WEBHOOKS_URL'].map(
      (name) => [name, system.env[name]],
    ),
  );
  return runScript('scripts/identity-cli.mjs', ['app', ...args], env);
}

/** `KEY=value` lines of a CLI's output. */
const assignments = (stdout: string) => Object.fromEntries([...stdout.matchAll(/^([A-Z_]+)=(.*)$/gm)].map((match) => [match[1], match[2]]));

/** Repeats `probe` until its answer has `status` (pub/sub invalidations arrive asynchronously). */
async function untilStatus(probe: () => Promise<ApiResponse>, status: number, what: string): Promise<ApiResponse> {
  let last: ApiResponse | undefined;
  await until(async () => (last = await probe()).status === status, what, 10_000);
  return last!;
}

describe('POST /v1/applications/<ID>/secret', () => {
  it('answers a new secret once; tokens signed with it work, and those signed with the previous one within the grace period', async () => {
    const app = await newApplication();
    const before = Date.now();
    const rotated = await rotate(app);
    expect(rotated).toEqual({
      success: true,
      message: `You successfully rotated the secret of application ${app.id}`,
      applicationID: app.id,
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      previousSecretExpires: expect.any(String),
    });
    expect(rotated.secret).not.toBe(app.secret);
    // SECRET_ROTATION_GRACE_HOURS defaults to 24.
    const expires = Date.parse(rotated.previousSecretExpires!);
    expect(expires).toBeGreaterThanOrEqual(before + 24 * HOUR_MS - 60_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * HOUR_MS + 60_000);

    for (const secret of [rotated.secret, app.secret]) {
      expect((await verify(app, secret)).status).toBe(200);
      expect((await authorize(app, secret)).status).toBe(200);
    }
    // Shown once: neither the list nor the application carries it, nor the stored row in clear.
    const customer = asCustomer(system);
    for (const response of [await customer.get('/v1/applications'), await customer.get(`/v1/applications/${app.id}`)]) {
      expect(response.status).toBe(200);
      expect(JSON.stringify(response.body)).not.toContain(rotated.secret);
      expect(JSON.stringify(response.body)).not.toContain(app.secret);
    }
    const { rows } = await system.sql.query(`SELECT row_to_json(a)::text AS text FROM identity.applications a WHERE a.id = $1`, [app.id]);
    expect(rows[0].text).not.toContain(rotated.secret);
    expect(rows[0].text).not.toContain(app.secret);
  });

  it('keeps only the secret it replaces: after a second rotation (through /v1/projects), the first secret fails with invalid_app_token', async () => {
    const app = await newApplication();
    const first = await rotate(app);
    const second = await rotate(app, 'projects');
    expect(new Set([app.secret, first.secret, second.secret]).size).toBe(3);
    expect((await verify(app, second.secret)).status).toBe(200);
    expect((await verify(app, first.secret)).status).toBe(200);
    const refused = await untilStatus(() => verify(app, app.secret), 401, 'the original secret to be refused');
    expectError(refused, 401, 'invalid_app_token');
    expectError(await authorize(app, app.secret), 401, 'invalid_app_token');
  });

  it('is refused for another customer’s application, an unknown one, a malformed ID and a server token', async () => {
    const app = await newApplication();
    const stranger = await system.addCustomer();
    const strangerClient = new ApiClient(system, () => customerToken(stranger.id, stranger.secret));
    expectError(await strangerClient.post(`/v1/applications/${app.id}/secret`), 401, 'application_not_found');
    expectError(await asCustomer(system).post(`/v1/applications/${randomUUID()}/secret`), 401, 'application_not_found');
    expectError(await asCustomer(system).post('/v1/applications/not-a-uuid/secret'), 400, 'invalid_request');
    expectError(await app.client.post(`/v1/applications/${app.id}/secret`), 401, 'invalid_customer_token');
    // Nothing changed: the application's own secret still signs.
    expect((await verify(app, app.secret)).status).toBe(200);
  });

  it('signs webhook deliveries with the new secret at once, verified by the SDK receiver', async () => {
    const app = await newApplication('rotation events');
    await seedTeam(app);
    const path = await receiver.register(app, ['thread-message-added']);
    const postMessage = async (threadId: string) => {
      const response = await app.client.post(`/v1/threads/${threadId}/messages`, {
        authorID: 'ann',
        content: [{ type: 'p', children: [{ text: threadId }] }],
        createThread: { groupID: 'team', location: { page: threadId }, url: `https://example.com/${threadId}`, name: threadId },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.messageID as string;
    };
    const delivered = async (messageId: string) =>
      (await receiver.waitFor((received) => received.path === path && (received.body as { messageID?: string } | null)?.messageID === messageId))[0];

    // Before: signed with the original secret (and the webhooks service has it cached).
    const early = await delivered(await postMessage(uniqueId('before')));
    expect(early.verified, early.error ?? '').toBe(true);

    const rotated = await rotate(app);
    const late = receiver.received.length;
    const after = await delivered(await postMessage(uniqueId('after')));
    expect(after.verified, after.error ?? '').toBe(true);
    // Every request since the rotation verified with the new secret, and none with the old one.
    const since = receiver.received.slice(late).filter((received) => received.path === path);
    expect(since.every((received) => received.verified)).toBe(true);
    expect(() =>
      validateWebhookSignature(after.rawBody, after.headers['x-cord-timestamp'] as string, after.headers['x-cord-signature'] as string, app.secret),
    ).toThrow('Unable to verify webhook signature');
    expect(rotated.secret).not.toBe(app.secret);
  });
});

describe('npm run app (the operator CLI, on the database)', () => {
  it('list and show name applications of every customer, never a secret', async () => {
    const app = await newApplication('listed by the CLI');
    const other = await system.addCustomer();
    const created = await request(system.url, 'POST', '/v1/applications', { token: await customerToken(other.id, other.secret), body: { name: 'another customer’s' } });
    expect(created.status).toBe(200);

    const listed = await runCli(['list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${app.id}\\t${system.customer.id}\\t\\S+\\tlisted by the CLI$`, 'm'));
    expect(listed.stdout).toMatch(new RegExp(`^${created.body.applicationID}\\t${other.id}\\t\\S+\\tanother customer’s$`, 'm'));
    expect(listed.stdout).not.toContain(app.secret);

    const shown = await runCli(['show', app.id.toUpperCase()]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`id: ${app.id}\n`);
    expect(shown.stdout).toContain('name: listed by the CLI\n');
    expect(shown.stdout).toContain(`customer: ${system.customer.id}\n`);
    expect(shown.stdout).toContain('previous secret: none\n');
    expect(shown.stdout).not.toContain(app.secret);

    const unknown = await runCli(['show', randomUUID()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^No application /);
    const misused = await runCli(['show', 'not-a-uuid']);
    expect(misused.code).toBe(2);
    expect(misused.stderr).toMatch(/^The application ID must be a UUID, not "not-a-uuid"\.$/m);
    expect(misused.stderr).not.toContain('usage:');
    const incomplete = await runCli(['show']);
    expect(incomplete.code).toBe(2);
    expect(incomplete.stderr).toContain('usage: npm run app -- list');
  });

  it('rotate-secret prints a new secret that works at once; the previous one works until end-grace, then fails with invalid_app_token', async () => {
    const app = await newApplication('rotated by the CLI');
    const rotated = await runCli(['rotate-secret', app.id]);
    expect(rotated.code, rotated.stderr).toBe(0);
    const { APPLICATION_ID, APPLICATION_SECRET } = assignments(rotated.stdout);
    expect(APPLICATION_ID).toBe(app.id);
    expect(APPLICATION_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated.stderr).toMatch(/previous secret keep working until \S+Z\./);
    secrets.set(app.id, APPLICATION_SECRET);
    expect((await untilStatus(() => verify(app, APPLICATION_SECRET), 200, 'the new secret to be accepted')).status).toBe(200);
    // Within the grace period (24 hours by default): the secret the customer lost still signs.
    expect((await verify(app, app.secret)).status).toBe(200);
    expect((await runCli(['show', app.id])).stdout).toMatch(/^previous secret: accepted until \S+Z$/m);

    // The grace period ends: the previous secret's expiry is now in the past.
    const ended = await runCli(['end-grace', app.id]);
    expect(ended.code, ended.stderr).toBe(0);
    expectError(await untilStatus(() => verify(app, app.secret), 401, 'the previous secret to be refused'), 401, 'invalid_app_token');
    expectError(await authorize(app, app.secret), 401, 'invalid_app_token');
    expect((await verify(app, APPLICATION_SECRET)).status).toBe(200);
    expect((await runCli(['show', app.id])).stdout).toMatch(/^previous secret: expired at \S+Z$/m);
    const again = await runCli(['end-grace', app.id]);
    expect(again.code).toBe(1);
  });

  it('rotate-secret --grace-hours 0 stops the previous secret at once (a leaked secret)', async () => {
    const app = await newApplication('leaked');
    expect((await verify(app, app.secret)).status).toBe(200);
    const rotated = await runCli(['rotate-secret', app.id, '--grace-hours', '0']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stderr).toContain('no longer work');
    const { APPLICATION_SECRET } = assignments(rotated.stdout);
    secrets.set(app.id, APPLICATION_SECRET);
    expectError(await untilStatus(() => verify(app, app.secret), 401, 'the leaked secret to be refused'), 401, 'invalid_app_token');
    expect((await verify(app, APPLICATION_SECRET)).status).toBe(200);
    expect((await runCli(['rotate-secret', app.id, '--grace-hours', 'soon'])).code).toBe(2);
  });

  it('delete removes an application whose secret is lost, and everything it owns in every service', async () => {
    const app = await newApplication('lost its secret');
    await seedTeam(app);
    const threadId = uniqueId('doomed');
    const message = await app.client.post(`/v1/threads/${threadId}/messages`, {
      authorID: 'ann',
      content: [{ type: 'p', children: [{ text: 'gone soon' }] }],
      createThread: { groupID: 'team', location: { page: threadId }, url: 'https://example.com/doomed', name: 'doomed' },
    });
    expect(message.status, JSON.stringify(message.body)).toBe(200);
    const notified = await app.client.post('/v1/notifications', { actor_id: 'ann', recipient_id: 'bob', template: '{{actor}} says hi', url: 'https://example.com', type: 'url' });
    expect(notified.status, JSON.stringify(notified.body)).toBe(200);
    await waitForBackgroundWork(system);
    expect(await applicationRows(system, app.id)).toMatchObject({ threads: 1, messages: 1, notifications: 1 });

    const deleted = await runCli(['delete', app.id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`Deleted application ${app.id}`);

    expectError(await untilStatus(() => verify(app, app.secret), 401, 'the deleted application to be refused'), 401, 'application_not_found');
    expectError(await asCustomer(system).get(`/v1/applications/${app.id}`), 401, 'application_not_found');
    expect(await count(system, 'SELECT count(*)::int AS n FROM identity.users WHERE application_id = $1', [app.id])).toBe(0);
    // The same cascade as DELETE /v1/applications/<ID>: the other services purge its data.
    await waitForBackgroundWork(system);
    expect(await applicationRows(system, app.id)).toMatchObject({ threads: 0, messages: 0, notifications: 0 });
    expect((await runCli(['delete', app.id])).code).toBe(1);
  });
});
