/**
 * The gateway: route lookup (404/405, case, trailing slash), the internal headers it sets and
 * strips, services refusing direct calls, request ids, CORS, failing upstreams (503/502/504)
 * and its credential cache.
 */
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import { createInternalClient, createLogger, type InternalClient } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { CredentialStore } from '@collab/shared';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { ApiClient, asCustomer, createApplication, request, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';
import { expectError } from '../support/expect.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let system: TestSystem;
let app: TestApplication;
let other: TestApplication;

systemWithApplication('routing app', async (started) => {
  ({ system, app } = started);
  other = await createApplication(system, 'other app');
  expect((await app.client.put('/v1/users/alice', { name: 'Alice' })).status).toBe(200);
});


const appToken = () => serverToken(app.id, app.secret);
const custToken = () => customerToken(system.customer.id, system.customer.secret);

/** Listens on a free port; `close` also ends open connections. */
async function listen(server: http.Server | net.Server): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A URL on which nothing listens. */
async function closedUrl(): Promise<string> {
  const { url, close } = await listen(net.createServer());
  await close();
  return url;
}

/** A second gateway on this system's Redis and secrets, with some settings replaced. */
async function startGateway(overrides: Record<string, string>) {
  const gateway = await createGateway(
    loadGatewayConfig({ ...system.env, ...overrides }),
    createLogger('test', 'silent'),
    () => false,
  );
  const server = await listen(http.createServer(gateway.app));
  return {
    url: server.url,
    async close() {
      await server.close();
      await gateway.close();
    },
  };
}

describe('route lookup', () => {
  it('an unknown path → 404 not_found in the error envelope, with or without a token', async () => {
    for (const path of ['/v1/nope', '/v1/users/alice/extra/segments', '/v2/users', '/nope', '/v1']) {
      expectError(await request(system.url, 'GET', path), 404, 'not_found');
      expectError(await request(system.url, 'GET', path, { token: await appToken() }), 404, 'not_found');
    }
  });

  it('a known path with a wrong method → 405 method_not_allowed with an Allow header', async () => {
    const collection = await request(system.url, 'PATCH', '/v1/applications');
    expectError(collection, 405, 'method_not_allowed');
    expect(collection.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'POST']);

    const verify = await request(system.url, 'DELETE', '/v1/verify', { token: await appToken() });
    expectError(verify, 405, 'method_not_allowed');
    expect(verify.headers.get('allow')).toBe('GET');

    const authorize = await request(system.url, 'GET', '/v1/authorize');
    expectError(authorize, 405, 'method_not_allowed');
    expect(authorize.headers.get('allow')).toBe('POST');

    const item = await request(system.url, 'POST', `/v1/applications/${app.id}`);
    expectError(item, 405, 'method_not_allowed');
    expect(item.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'PUT']);
  });

  it('answers 404 and 405 before looking at the Authorization header', async () => {
    expectError(await request(system.url, 'GET', '/v1/nope', { headers: { authorization: 'garbage' } }), 404, 'not_found');
    expectError(
      await request(system.url, 'PUT', '/v1/verify', { headers: { authorization: 'garbage' } }),
      405,
      'method_not_allowed',
    );
  });

  it('matches paths case-insensitively', async () => {
    const verify = await request(system.url, 'GET', '/V1/Verify', { token: await appToken() });
    expect(verify.status).toBe(200);
    expect(verify.body.application_id).toBe(app.id);
    const user = await request(system.url, 'GET', '/V1/USERS/alice', { token: await appToken() });
    expect(user.status).toBe(200);
    expect(user.body.id).toBe('alice');
    const list = await request(system.url, 'GET', '/v1/APPLICATIONS', { token: await custToken() });
    expect(list.status).toBe(200);
    expect(list.body.map((a: { id: string }) => a.id)).toContain(app.id);
  });

  it('keeps path parameters as sent (case is only ignored in the literal segments)', async () => {
    expectError(await request(system.url, 'GET', '/v1/users/ALICE', { token: await appToken() }), 401, 'user_not_found');
  });

  it('tolerates a trailing slash', async () => {
    expect((await request(system.url, 'GET', '/v1/verify/', { token: await appToken() })).body.application_id).toBe(app.id);
    expect((await request(system.url, 'GET', '/v1/users/alice/', { token: await appToken() })).body.id).toBe('alice');
    const one = await request(system.url, 'GET', `/v1/Applications/${app.id}/`, { token: await custToken() });
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(app.id);
  });

  it('ignores the query string when matching', async () => {
    const response = await request(system.url, 'GET', '/v1/verify?foo=bar', { token: await appToken() });
    expect(response.body.application_id).toBe(app.id);
  });
});

describe('internal headers', () => {
  it('a client-sent x-collab-application-id for another application is ignored', async () => {
    const response = await request(system.url, 'GET', '/v1/verify', {
      token: await appToken(),
      headers: { 'x-collab-application-id': other.id },
    });
    expect(response.body).toEqual({ success: true, application_id: app.id, application_name: 'routing app' });
  });

  it('writes land in the token’s application, whatever application header the client sends', async () => {
    const created = await request(system.url, 'PUT', '/v1/users/spoofed', {
      token: await appToken(),
      body: { name: 'Spoofed' },
      headers: { 'x-collab-application-id': other.id },
    });
    expect(created.status).toBe(200);
    expect((await app.client.get('/v1/users/spoofed')).status).toBe(200);
    expectError(await other.client.get('/v1/users/spoofed'), 401, 'user_not_found');
  });

  it('a client-sent x-collab-customer-id is ignored', async () => {
    const { id: strangerId, secret: strangerSecret } = await system.addCustomer();
    const stranger = new ApiClient(system, () => customerToken(strangerId, strangerSecret));
    const theirs = (await stranger.post('/v1/applications', { name: 'theirs' })).body.applicationID;

    const mine = await request(system.url, 'GET', '/v1/applications', {
      token: await custToken(),
      headers: { 'x-collab-customer-id': strangerId },
    });
    const ids = mine.body.map((a: { id: string }) => a.id);
    expect(ids).toContain(app.id);
    expect(ids).not.toContain(theirs);
  });

  it('internal headers never authenticate a request by themselves', async () => {
    const headers = {
      'x-collab-application-id': app.id,
      'x-collab-customer-id': system.customer.id,
      'x-collab-internal-token': system.env.INTERNAL_TOKEN,
    };
    expectError(await request(system.url, 'GET', '/v1/users', { headers }), 401, 'missing_authorization_header');
    expectError(await request(system.url, 'GET', '/v1/applications', { headers }), 401, 'missing_authorization_header');
  });

  it('the service receives the verified caller, the internal token and the request id, and no Authorization', async () => {
    // A stand-in identity that records what the gateway forwards, and passes the gateway's own
    // credential lookups (/internal/*) on to the real identity service.
    const seen: http.IncomingHttpHeaders[] = [];
    const bodies: string[] = [];
    const recorder = http.createServer(async (req, res) => {
      if (req.url!.startsWith('/internal/')) {
        const upstream = await fetch(`${system.serviceUrls.identity}${req.url}`, {
          headers: { 'x-collab-internal-token': String(req.headers['x-collab-internal-token'] ?? '') },
        });
        res.writeHead(upstream.status, { 'content-type': 'application/json' });
        res.end(await upstream.text());
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      seen.push(req.headers);
      bodies.push(Buffer.concat(chunks).toString());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"recorded":true}');
    });
    const identity = await listen(recorder);
    const gateway = await startGateway({ IDENTITY_URL: identity.url });
    try {
      const spoofed = {
        'x-collab-application-id': other.id,
        'x-collab-customer-id': system.customer.id,
        'x-collab-internal-token': 'client-chosen',
        'x-request-id': 'client-chosen',
      };
      const asApp = await request(gateway.url, 'GET', '/v1/verify', { token: await appToken(), headers: spoofed, fromStandIn: true });
      expect(asApp.body).toEqual({ recorded: true });
      expect(seen[0]['x-collab-application-id']).toBe(app.id);
      expect(seen[0]['x-collab-customer-id']).toBeUndefined();
      expect(seen[0]['x-collab-internal-token']).toBe(system.env.INTERNAL_TOKEN);
      expect(seen[0].authorization).toBeUndefined();
      expect(seen[0]['x-request-id']).toMatch(UUID);
      expect(seen[0]['x-request-id']).toBe(asApp.headers.get('x-request-id'));

      const asCustomerCall = await request(gateway.url, 'GET', '/v1/applications', {
        token: await custToken(),
        headers: { ...spoofed, 'x-collab-customer-id': randomUUID() },
        fromStandIn: true,
      });
      expect(asCustomerCall.status).toBe(200);
      expect(seen[1]['x-collab-customer-id']).toBe(system.customer.id);
      expect(seen[1]['x-collab-application-id']).toBeUndefined();
      expect(seen[1]['x-collab-internal-token']).toBe(system.env.INTERNAL_TOKEN);
      expect(seen[1].authorization).toBeUndefined();

      const anonymous = await request(gateway.url, 'POST', '/v1/authorize', {
        body: { signed_app_token: 'a.b.c' },
        headers: spoofed,
        fromStandIn: true,
      });
      expect(anonymous.status).toBe(200);
      expect(seen[2]['x-collab-application-id']).toBeUndefined();
      expect(seen[2]['x-collab-customer-id']).toBeUndefined();
      expect(seen[2]['x-collab-internal-token']).toBe(system.env.INTERNAL_TOKEN);
      // The body reaches the service untouched.
      expect(bodies[2]).toBe(JSON.stringify({ signed_app_token: 'a.b.c' }));
      expect(seen).toHaveLength(3);
    } finally {
      await gateway.close();
      await identity.close();
    }
  });
});

describe('services behind the gateway', () => {
  it('answer 404 and never data when called directly without the internal token', async () => {
    const headers = { 'x-collab-application-id': app.id };
    const direct = await request(system.serviceUrls.identity, 'GET', '/v1/users', { headers });
    expectError(direct, 404, 'not_found');
    expect(JSON.stringify(direct.body)).not.toContain('alice');

    const withToken = await request(system.serviceUrls.identity, 'GET', '/v1/users', {
      headers,
      token: await appToken(),
    });
    expectError(withToken, 404, 'not_found');

    const credentials = await request(system.serviceUrls.identity, 'GET', `/internal/applications/${app.id}/credentials`);
    expectError(credentials, 404, 'not_found');
    expect(JSON.stringify(credentials.body)).not.toContain(app.secret);

    for (const service of ['conversation', 'notification'] as const)
      expectError(await request(system.serviceUrls[service], 'GET', '/v1/users', { headers }), 404, 'not_found');
  });

  it('answer 404 to a wrong internal token', async () => {
    const response = await request(system.serviceUrls.identity, 'GET', '/v1/users/alice', {
      headers: { 'x-collab-application-id': app.id, 'x-collab-internal-token': randomBytes(24).toString('hex') },
    });
    expectError(response, 404, 'not_found');
    expect(JSON.stringify(response.body)).not.toContain('Alice');
  });

  it('answer with the internal token (so the 404s above are the guard, not a missing route)', async () => {
    const response = await request(system.serviceUrls.identity, 'GET', '/v1/users/alice', {
      headers: { 'x-collab-application-id': app.id, 'x-collab-internal-token': system.env.INTERNAL_TOKEN },
    });
    expect(response.status).toBe(200);
    expect(response.body.name).toBe('Alice');
  });
});

describe('request ids', () => {
  it('every response carries a fresh X-Request-Id, successes and errors alike', async () => {
    const responses = [
      await request(system.url, 'GET', '/v1/verify', { token: await appToken() }),
      await request(system.url, 'GET', '/v1/applications', { token: await custToken() }),
      await request(system.url, 'GET', '/v1/verify'),
      await request(system.url, 'GET', '/v1/nope'),
      await request(system.url, 'PATCH', '/v1/verify'),
      await request(system.url, 'POST', '/v1/authorize', { body: {} }),
    ];
    const ids = responses.map((response) => response.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('replaces a client-chosen X-Request-Id', async () => {
    const response = await request(system.url, 'GET', '/v1/verify', {
      token: await appToken(),
      headers: { 'x-request-id': 'chosen-by-client' },
    });
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });
});

describe('CORS', () => {
  it('answers a preflight with 204 and permissive headers, without a token', async () => {
    const response = await request(system.url, 'OPTIONS', '/v1/users/alice', {
      headers: {
        origin: 'https://somewhere.example',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
  });

  it('lets browsers read successes and errors', async () => {
    const ok = await request(system.url, 'GET', '/v1/verify', { token: await appToken(), headers: { origin: 'https://x.example' } });
    expect(ok.headers.get('access-control-allow-origin')).toBe('*');
    const denied = await request(system.url, 'GET', '/v1/verify', { headers: { origin: 'https://x.example' } });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('failing upstreams', () => {
  it('identity unreachable → 503 service_unavailable with Retry-After, on every kind of route', async () => {
    const gateway = await startGateway({ IDENTITY_URL: await closedUrl() });
    try {
      const authorized = await request(system.url, 'POST', '/v1/authorize', {
        body: { signed_app_token: await appToken() },
      });
      const calls = [
        // Server token: the gateway cannot fetch the application's secret.
        await request(gateway.url, 'GET', '/v1/verify', { token: await appToken() }),
        await request(gateway.url, 'GET', '/v1/users', { token: await appToken() }),
        // Access token: the gateway cannot fetch the session.
        await request(gateway.url, 'GET', '/v1/users', { token: authorized.body.access_token }),
        // Customer token: the gateway cannot fetch the customer.
        await request(gateway.url, 'GET', '/v1/applications', { token: await custToken() }),
        // No token: the proxy cannot connect.
        await request(gateway.url, 'POST', '/v1/authorize', { body: { signed_app_token: await appToken() } }),
      ];
      for (const response of calls) {
        expectError(response, 503, 'service_unavailable');
        expect(response.headers.get('retry-after')).toBeTruthy();
        expect(response.headers.get('x-request-id')).toMatch(UUID);
      }
      // Token errors that need no lookup, and routing, still answer as usual.
      expectError(await request(gateway.url, 'GET', '/v1/users'), 401, 'missing_authorization_header');
      expectError(await request(gateway.url, 'GET', '/v1/nope'), 404, 'not_found');
    } finally {
      await gateway.close();
    }
  });

  it('an upstream answering garbage → 502 bad_gateway', async () => {
    const garbage = net.createServer((socket) => {
      socket.once('data', () => socket.end('this is not HTTP at all\r\n\r\n'));
    });
    const upstream = await listen(garbage);
    const gateway = await startGateway({ IDENTITY_URL: upstream.url });
    try {
      const response = await request(gateway.url, 'POST', '/v1/authorize', { body: { signed_app_token: 'a.b.c' } });
      expectError(response, 502, 'bad_gateway');
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });

  it('an upstream that never answers → 504 gateway_timeout after UPSTREAM_TIMEOUT_MS', async () => {
    const silent = net.createServer(() => {
      // Accepts the connection and never answers.
    });
    const upstream = await listen(silent);
    const gateway = await startGateway({ IDENTITY_URL: upstream.url, UPSTREAM_TIMEOUT_MS: '200' });
    try {
      const response = await request(gateway.url, 'POST', '/v1/authorize', { body: { signed_app_token: 'a.b.c' } });
      expectError(response, 504, 'gateway_timeout');
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});

describe('the credential cache', () => {
  /** Identity's real internal API, with a gate that holds answers back until released. */
  function gatedIdentity() {
    const real = createInternalClient({
      baseUrl: system.serviceUrls.identity,
      internalToken: system.env.INTERNAL_TOKEN,
      service: 'identity',
    });
    let release: () => void = () => {};
    let gate: Promise<void> = Promise.resolve();
    let fetched: () => void = () => {};
    const state = {
      calls: 0,
      hold() {
        gate = new Promise((resolve) => (release = resolve));
        return new Promise<void>((resolve) => (fetched = resolve));
      },
      release: () => release(),
    };
    const client: InternalClient = {
      async call<T>(...args: Parameters<InternalClient['call']>) {
        state.calls++;
        try {
          return await real.call<T>(...args);
        } finally {
          fetched();
          await gate;
        }
      },
    };
    return { client, state };
  }

  it('caches a secret and drops it on invalidation, whatever the case of the id', async () => {
    const doomed = await createApplication(system, 'cached');
    const { client, state } = gatedIdentity();
    const store = new CredentialStore(client, 60_000);
    expect((await store.application(doomed.id, 'r1'))?.secret).toBe(doomed.secret);
    expect((await store.application(doomed.id, 'r2'))?.secret).toBe(doomed.secret);
    expect(state.calls).toBe(1);

    await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret });
    // Still cached: this store is not subscribed to Redis.
    expect(await store.application(doomed.id, 'r3')).not.toBeNull();
    store.invalidate({ kind: 'application', id: doomed.id.toUpperCase() });
    expect(await store.application(doomed.id, 'r4')).toBeNull();
  });

  it('does not keep a value whose load was in flight when an invalidation arrived', async () => {
    const doomed = await createApplication(system, 'racing');
    const { client, state } = gatedIdentity();
    const store = new CredentialStore(client, 60_000);

    const fetched = state.hold();
    const inFlight = store.application(doomed.id, 'r1');
    await fetched; // identity has answered with the secret; the store has not stored it yet
    await asCustomer(system).delete(`/v1/applications/${doomed.id}`, { secret: doomed.secret });
    store.invalidate({ kind: 'application', id: doomed.id });
    state.release();
    expect((await inFlight)?.secret).toBe(doomed.secret);

    // The next lookup asks identity again instead of trusting the stale answer.
    expect(await store.application(doomed.id, 'r2')).toBeNull();
    expect(state.calls).toBe(2);
  });

  it('drops every cached session of an application on sessions-of-application', async () => {
    const owner = await createApplication(system, 'sessions');
    const authorized = await request(system.url, 'POST', '/v1/authorize', {
      body: { signed_app_token: await serverToken(owner.id, owner.secret) },
    });
    const sessionId = JSON.parse(Buffer.from(authorized.body.access_token.split('.')[1], 'base64url').toString()).session_id;
    const { client, state } = gatedIdentity();
    const store = new CredentialStore(client, 60_000);
    expect((await store.session(sessionId, 'r1'))?.expiresAt).not.toBeNull();
    await system.sql.query('UPDATE identity.sessions SET expires_at = NULL WHERE id = $1', [sessionId]);
    expect((await store.session(sessionId, 'r2'))?.expiresAt).not.toBeNull();
    store.invalidate({ kind: 'sessions-of-application', id: owner.id.toUpperCase() });
    expect((await store.session(sessionId, 'r3'))?.expiresAt).toBeNull();
    expect(state.calls).toBe(2);
  });
});
