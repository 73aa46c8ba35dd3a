/**
 * The console's sessions: sign-in sets an HttpOnly, SameSite=Strict cookie (Secure behind https),
 * mutations need the session's CSRF token, failed sign-ins are limited, a session expires, and a
 * customer acts on their own applications only. Plain HTTP: the pages are test/console/console.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, createRedis, ROUTES, type RedisClient } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { SIGN_IN_FAILURES } from '../../services/gateway/src/console/sign-in-limit.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { createApplication, type TestApplication } from '../support/client.js';
import { systemForFile, type TestSystem } from '../support/system.js';

const OPERATOR = { ADMIN_USERNAME: 'ops', ADMIN_PASSWORD: 'a-long-operator-password' };

let system: TestSystem;
let own: TestApplication;
let redis: RedisClient;

systemForFile(
  async (started) => {
    system = started;
    own = await createApplication(system, 'own app');
  },
  { env: OPERATOR },
);
beforeAll(() => {
  redis = createRedis(system.env.REDIS_URL!);
});
afterAll(() => redis?.disconnect());

interface Signed {
  cookie: string;
  setCookie: string;
  csrfToken: string;
}

async function signIn(body: Record<string, string>, headers: Record<string, string> = {}): Promise<Signed> {
  const response = await fetch(`${system.url}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  const setCookie = response.headers.get('set-cookie')!;
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  return { setCookie, cookie: setCookie.split(';')[0]!, csrfToken };
}

const asCustomer = (customer = system.customer) => signIn({ customerId: customer.id, secret: customer.secret });

async function call(session: Signed | null, method: string, path: string, body?: unknown, csrf = session?.csrfToken) {
  const headers: Record<string, string> = {};
  if (session) headers.cookie = session.cookie;
  if (csrf) headers['x-csrf-token'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${system.url}/console/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

/** Runs `use` against a gateway of its own, started in this process with `env`, and stops it. */
async function withGateway(env: Record<string, string | undefined>, use: (url: string) => Promise<void>): Promise<void> {
  const gateway = await createGateway(loadGatewayConfig(env), createLogger('test', 'silent'), () => false);
  const server = http.createServer(gateway.app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await gateway.close();
  }
}

describe('signing in', () => {
  it('sets an HttpOnly, SameSite=Strict cookie on /console, Secure only behind https, and answers no secret', async () => {
    const plain = await asCustomer();
    expect(plain.setCookie).toMatch(/^console_session=[\w-]{40,}; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=43200$/);
    const behindTls = await signIn({ customerId: system.customer.id, secret: system.customer.secret }, { 'x-forwarded-proto': 'https' });
    expect(behindTls.setCookie).toMatch(/; Secure$/);
    const session = await call(plain, 'GET', '/session');
    expect(session.body).toEqual({ kind: 'customer', customerId: system.customer.id, csrfToken: plain.csrfToken, expiresAt: expect.any(String) });
    expect(JSON.stringify(session.body)).not.toContain(system.customer.secret);
  });

  it('a wrong secret or an unknown customer is refused with the same message', async () => {
    for (const body of [
      { customerId: system.customer.id, secret: 'wrong' },
      { customerId: '00000000-0000-4000-8000-000000000000', secret: 'wrong' },
    ]) {
      const response = await call(null, 'POST', '/session', body);
      expect(response).toEqual({ status: 401, body: { error: 'invalid_customer_token', message: 'The customer ID or secret is wrong.' } });
    }
    expect((await call(null, 'POST', '/session', { customerId: 'nope', secret: 'x' })).status).toBe(400);
    expect((await call(null, 'POST', '/session', { secret: 'x' })).body).toMatchObject({ error: 'missing_field' });
  });

  it(`after ${SIGN_IN_FAILURES} failures an account is refused for a while, even with the right secret`, async () => {
    const customer = await system.addCustomer();
    for (let i = 0; i < SIGN_IN_FAILURES; i++) await call(null, 'POST', '/session', { customerId: customer.id, secret: `guess-${i}` });
    const response = await fetch(`${system.url}/console/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customerId: customer.id, secret: customer.secret }),
    });
    expect(response.status).toBe(429);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    // Other accounts from other addresses are not held back by it (the address count is its own).
    await redis.del(...(await redis.keys(`${system.env.REDIS_PREFIX}:console:sign-in:address:*`)));
    await asCustomer();
  });

  it('counts failures per client behind a trusted proxy, by the X-Forwarded-For entry the proxy added', async () => {
    const post = (url: string, forwardedFor: string, body: Record<string, string>) =>
      fetch(`${url}/console/api/session`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor }, body: JSON.stringify(body) });
    await withGateway({ ...system.env, TRUSTED_PROXY_CIDRS: '127.0.0.0/8' }, async (url) => {
      // One client guesses at other accounts each time, and writes its own first entry each time.
      for (let i = 0; i < SIGN_IN_FAILURES; i++)
        expect((await post(url, `198.51.100.${i}, 203.0.113.5`, { customerId: randomUUID(), secret: 'guess' })).status).toBe(401);
      const guesser = await post(url, '203.0.113.5', { customerId: system.customer.id, secret: system.customer.secret });
      expect(guesser.status).toBe(429);
      // Another client behind the same proxy is not held back by it.
      expect((await post(url, '203.0.113.6', { customerId: system.customer.id, secret: system.customer.secret })).status).toBe(200);
    });
    // Without trusted proxies the header is not believed: the connection's address is the client.
    for (let i = 0; i < SIGN_IN_FAILURES; i++) await post(system.url, '203.0.113.7', { customerId: randomUUID(), secret: 'guess' });
    expect((await post(system.url, '203.0.113.8', { customerId: system.customer.id, secret: system.customer.secret })).status).toBe(429);
    await redis.del(...(await redis.keys(`${system.env.REDIS_PREFIX}:console:sign-in:address:*`)));
  });

  it('the operator signs in with ADMIN_USERNAME and ADMIN_PASSWORD, and sees the status of every service and queue', async () => {
    expect((await call(null, 'POST', '/session', { username: 'ops', password: 'wrong-password' })).status).toBe(401);
    const operator = await signIn({ username: OPERATOR.ADMIN_USERNAME, password: OPERATOR.ADMIN_PASSWORD });
    const status = await call(operator, 'GET', '/operator/status');
    expect(status.status).toBe(200);
    const body = status.body as { services: { name: string; ready: boolean }[]; queues: { name: string }[] };
    expect(body.services.map((service) => [service.name, service.ready])).toEqual([
      ['identity', true],
      ['conversation', true],
      ['notification', true],
      ['webhooks', true],
      ['mail', true],
    ]);
    expect(body.queues.length).toBeGreaterThan(3);
    const { customers } = status.body as unknown as { customers: { customers: { id: string; applications: number }[]; total: number } };
    expect(customers.customers).toContainEqual(expect.objectContaining({ id: system.customer.id, applications: 1 }));
    expect(customers.total).toBe(customers.customers.length);
    expect(JSON.stringify(status.body)).not.toContain(system.customer.secret);
    // The operator has no customer's applications; a customer has no operator page.
    expect((await call(operator, 'GET', '/customer/v1/applications')).status).toBe(404);
    expect((await call(await asCustomer(), 'GET', '/operator/status')).status).toBe(404);
  });
});

describe('a session', () => {
  it('calls the API as the customer and as its applications', async () => {
    const session = await asCustomer();
    const list = await call(session, 'GET', '/customer/v1/applications');
    expect(list.status).toBe(200);
    expect((list.body as unknown as { id: string }[]).map((application) => application.id)).toContain(own.id);
    const users = await call(session, 'GET', `/apps/${own.id}/v1/users`);
    expect(users.status).toBe(200);
  });

  it('without a cookie, or with a made-up one, is refused', async () => {
    expect((await call(null, 'GET', '/customer/v1/applications')).status).toBe(401);
    const madeUp = { cookie: 'console_session=made-up', setCookie: '', csrfToken: 'x' };
    expect((await call(madeUp, 'GET', '/customer/v1/applications')).status).toBe(401);
  });

  it('a mutation without the CSRF token, or with another session\'s, is refused and changes nothing', async () => {
    const session = await asCustomer();
    const other = await asCustomer();
    for (const csrf of [undefined, other.csrfToken]) {
      const response = await call(session, 'PUT', `/customer/v1/applications/${own.id}`, { name: 'renamed' }, csrf ?? '');
      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ message: expect.stringContaining('X-CSRF-Token') });
    }
    const read = await call(session, 'GET', `/customer/v1/applications/${own.id}`);
    expect(read.body).toMatchObject({ name: 'own app' });
  });

  it('ends at its expiry and at sign-out', async () => {
    const session = await asCustomer();
    const [key] = await redis.keys(`${system.env.REDIS_PREFIX}:console:session:*`);
    expect(key).toBeDefined();
    for (const stored of await redis.keys(`${system.env.REDIS_PREFIX}:console:session:*`)) {
      const value = JSON.parse((await redis.get(stored))!) as { expiresAt: string };
      await redis.set(stored, JSON.stringify({ ...value, expiresAt: new Date(Date.now() - 1000).toISOString() }), 'KEEPTTL');
    }
    expect((await call(session, 'GET', '/session')).status).toBe(401);

    const next = await asCustomer();
    expect((await call(next, 'DELETE', '/session')).status).toBe(204);
    expect((await call(next, 'GET', '/session')).status).toBe(401);
  });
});

describe('isolation: a customer acts on their own applications only', () => {
  it("another customer's application answers as one that does not exist, for every kind of call", async () => {
    const stranger = await system.addCustomer();
    const session = await asCustomer(stranger);
    const attempts: [string, string, unknown?][] = [
      ['GET', `/apps/${own.id}/v1/users`],
      ['PUT', `/apps/${own.id}/v1/users/u1`, { name: 'x' }],
      ['GET', `/customer/v1/applications/${own.id}`],
      ['PUT', `/customer/v1/applications/${own.id}`, { name: 'taken' }],
      ['POST', `/customer/v1/applications/${own.id}/secret`],
      ['POST', `/applications/${own.id}/delete`, { name: 'own app' }],
      ['POST', `/applications/${own.id}/token`],
      ['GET', `/apps/${own.id}/v1/webhooks/deliveries`],
      ['POST', `/apps/${own.id}/v1/applications/${own.id}/webhooks`, { url: 'https://example.com/x', events: [] }],
    ];
    for (const [method, path, body] of attempts) {
      const response = await call(session, method, path, body);
      // The console's own prefixes answer 404; the API's customer routes answer as the API does.
      expect([method, path, response.status]).toEqual([method, path, path.startsWith('/customer/') ? 401 : 404]);
    }
    expect((await call(await asCustomer(), 'GET', `/customer/v1/applications/${own.id}`)).body).toMatchObject({ name: 'own app' });
    // Its secret was not rotated: the application's own token still works.
    expect((await own.client.get('/v1/users')).status).toBe(200);
  });

  it('every application and customer route of the route table, called through the console on another customer\'s application, is refused', async () => {
    const stranger = await asCustomer(await system.addCustomer());
    const pathOf = (route: (typeof ROUTES)[number]) =>
      route.path.replace(/:(\w+)/g, (_match, name: string) => (name === 'applicationID' ? own.id : randomUUID()));
    const checked: string[] = [];
    for (const route of ROUTES) {
      // Customer routes without an application in their path act on the caller's own data.
      if (route.auth === 'none' || (route.auth === 'customer' && !route.path.includes(':applicationID'))) continue;
      const path = route.auth === 'app' ? `/apps/${own.id}${pathOf(route)}` : `/customer${pathOf(route)}`;
      const response = await call(stranger, route.method, path, route.method === 'GET' ? undefined : {});
      // The console refuses an application route before the API sees it; a customer route is the API's to refuse.
      if (route.auth === 'app') expect([route.id, response.status]).toEqual([route.id, 404]);
      else expect([route.id, response.status >= 400 && response.status < 500]).toEqual([route.id, true]);
      checked.push(route.id);
    }
    expect(checked.length).toBeGreaterThan(40);
    expect((await call(await asCustomer(), 'GET', `/customer/v1/applications/${own.id}`)).body).toMatchObject({ name: 'own app' });
    expect((await own.client.get('/v1/users')).status).toBe(200);
  });

  it('only routes of the right token kind are reachable under each prefix', async () => {
    const session = await asCustomer();
    expect((await call(session, 'GET', `/apps/${own.id}/v1/applications`)).status).toBe(404);
    expect((await call(session, 'GET', '/customer/v1/users')).status).toBe(404);
    expect((await call(session, 'GET', '/apps/not-a-uuid/v1/users')).status).toBe(404);
  });

  it('the token helper mints a short-lived server token of the customer\'s own application', async () => {
    const session = await asCustomer();
    const minted = await call(session, 'POST', `/applications/${own.id}/token`);
    expect(minted.status).toBe(200);
    const { token, expiresAt } = minted.body as { token: string; expiresAt: string };
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(15 * 60 * 1000);
    const users = await fetch(`${system.url}/v1/users`, { headers: { authorization: `Bearer ${token}` } });
    expect(users.status).toBe(200);
    expect((await call(session, 'POST', `/applications/${own.id}/token`, undefined, '')).status).toBe(401);
  });

  it('deleting an application needs its name typed exactly', async () => {
    const session = await asCustomer();
    const doomed = await createApplication(system, 'doomed');
    const wrong = await call(session, 'POST', `/applications/${doomed.id}/delete`, { name: 'Doomed' });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_field' } });
    expect((await call(session, 'POST', `/applications/${doomed.id}/delete`, { name: 'doomed' })).status).toBe(200);
    expect((await call(session, 'GET', `/customer/v1/applications/${doomed.id}`)).body).toMatchObject({ error: 'application_not_found' });
  });
});

describe('the sign-in page', () => {
  it("is told to offer the operator's sign-in only when ADMIN_USERNAME and ADMIN_PASSWORD are set", async () => {
    const options = await fetch(`${system.url}/console/api/sign-in`);
    expect(options.status).toBe(200);
    expect(await options.json()).toEqual({ customer: true, operator: true });

    const { ADMIN_USERNAME: _user, ADMIN_PASSWORD: _password, ...withoutOperator } = system.env;
    await withGateway(withoutOperator, async (url) => {
      expect(await (await fetch(`${url}/console/api/sign-in`)).json()).toEqual({ customer: true, operator: false });
      const operatorSignIn = await fetch(`${url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: OPERATOR.ADMIN_USERNAME, password: OPERATOR.ADMIN_PASSWORD }),
      });
      expect(operatorSignIn.status).toBe(404);
    });
  });
});

describe('CONSOLE=off', () => {
  it('leaves no console: its pages and its API answer 404', async () => {
    await withGateway({ ...system.env, CONSOLE: 'off' }, async (url) => {
      expect((await fetch(`${url}/console/`)).status).toBe(404);
      const signIn = await fetch(`${url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ customerId: system.customer.id, secret: system.customer.secret }),
      });
      expect(signIn.status).toBe(404);
      expect(signIn.headers.get('set-cookie')).toBeNull();
    });
    expect(loadGatewayConfig({ ...system.env }).CONSOLE).toBe(true);
  });
});
