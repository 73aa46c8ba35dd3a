/**
 * The operators' queue dashboard (bull-board) at /admin/queues: HTTP Basic auth with
 * ADMIN_USERNAME / ADMIN_PASSWORD only (an API token never passes), 404 when they are unset.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger, QUEUES } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';

const OPERATOR = { ADMIN_USERNAME: 'ops', ADMIN_PASSWORD: 'a-long-operator-password' };
const basic = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

let system: TestSystem;
let app: TestApplication;

systemWithApplication('dashboard app', (started) => ({ system, app } = started));

/** A gateway on this system's Redis and secrets with these settings, listening on a free port. */
async function startGateway(overrides: Record<string, string>) {
  const gateway = await createGateway(loadGatewayConfig({ ...system.env, ...overrides }), createLogger('test', 'silent'), () => false);
  const server = http.createServer(gateway.app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.close();
    },
  };
}

describe('queue dashboard with operator credentials configured', () => {
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  beforeAll(async () => {
    gateway = await startGateway(OPERATOR);
  });
  afterAll(() => gateway?.close());

  const get = (path: string, authorization?: string) =>
    fetch(`${gateway.url}${path}`, { headers: authorization ? { Authorization: authorization } : {} });

  it('no credentials → 401 with a Basic challenge', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const response = await get(path);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="queues"');
    }
  });

  it('a wrong user name or password → 401', async () => {
    for (const authorization of [
      basic('ops', 'not-the-operator-password'),
      basic('ops', `${OPERATOR.ADMIN_PASSWORD}x`),
      basic('admin', OPERATOR.ADMIN_PASSWORD),
      basic('', ''),
      'Basic !!!',
    ]) {
      const response = await get('/admin/queues', authorization);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="queues"');
    }
  });

  it('an application server token or a customer token as Bearer → 401', async () => {
    const tokens = [await serverToken(app.id, app.secret), await customerToken(system.customer.id, system.customer.secret)];
    for (const token of tokens) {
      for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
        const response = await get(path, `Bearer ${token}`);
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate')).toBe('Basic realm="queues"');
      }
    }
  });

  it('the operator credentials → the dashboard page, and its API lists the three queues', async () => {
    const authorization = basic(OPERATOR.ADMIN_USERNAME, OPERATOR.ADMIN_PASSWORD);
    const page = await get('/admin/queues', authorization);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toMatch(/<html/i);

    const api = await get('/admin/queues/api/queues', authorization);
    expect(api.status).toBe(200);
    const body = (await api.json()) as { queues: { name: string }[] };
    expect(body.queues.map((queue) => queue.name).sort()).toEqual(Object.keys(QUEUES).sort());
  });
});

describe('queue dashboard without operator credentials', () => {
  it('answers 404, even with a Basic header or an API token', async () => {
    const gateway = await startGateway({ ADMIN_USERNAME: '', ADMIN_PASSWORD: '' });
    try {
      for (const authorization of [undefined, basic('ops', OPERATOR.ADMIN_PASSWORD), `Bearer ${await serverToken(app.id, app.secret)}`]) {
        for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
          const response = await fetch(`${gateway.url}${path}`, { headers: authorization ? { Authorization: authorization } : {} });
          expect(response.status).toBe(404);
          expect(response.headers.get('www-authenticate')).toBeNull();
        }
      }
    } finally {
      await gateway.close();
    }
  });

  it('the system gateway (no ADMIN_* in its env) answers 404', async () => {
    expect((await fetch(`${system.url}/admin/queues`)).status).toBe(404);
  });
});
