/**
 * /readyz means it: a service is not ready while Redis is unreachable or a migration is pending,
 * and the gateway is not ready while a downstream service is unreachable.
 */
import { randomBytes } from 'node:crypto';
import http, { type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@collab/shared';
import { ensureDatabase } from '@collab/shared/storage';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freePort } from '@collab/shared/devkit';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { loadIdentityConfig } from '../../services/identity/src/config.js';
import { createIdentityService } from '../../services/identity/src/service.js';
import { systemForFile, type TestSystem } from '../support/system.js';

let system: TestSystem;
const logger = createLogger('test', 'silent');

systemForFile((started) => (system = started));

async function readyz(app: RequestListener): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`);
    return { status: response.status, body: (await response.json()) as { status: string; checks: Record<string, string> } };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('readiness', () => {
  it('is 200 when Postgres, Redis and the migrations are in order', async () => {
    const identity = await createIdentityService(loadIdentityConfig(system.env), logger);
    try {
      const answer = await readyz(identity.app);
      expect(answer.status).toBe(200);
      expect(answer.body.checks).toEqual({ postgres: 'ok', redis: 'ok', migrations: 'ok' });
    } finally {
      await identity.close();
    }
  });

  it('is 503 naming redis while Redis is unreachable', async () => {
    const identity = await createIdentityService(
      loadIdentityConfig({ ...system.env, REDIS_URL: `redis://127.0.0.1:${await freePort()}` }),
      logger,
    );
    try {
      const answer = await readyz(identity.app);
      expect(answer.status).toBe(503);
      expect(answer.body.checks.redis).not.toBe('ok');
      expect(answer.body.checks.postgres).toBe('ok');
    } finally {
      await identity.close();
    }
  });

  it('is 503 naming migrations while a migration is pending', async () => {
    const name = `collab_test_unmigrated_${randomBytes(4).toString('hex')}`;
    const url = new URL(system.env.DATABASE_URL);
    url.pathname = `/${name}`;
    await ensureDatabase(url.toString());
    const identity = await createIdentityService(loadIdentityConfig({ ...system.env, DATABASE_URL: url.toString() }), logger);
    try {
      const answer = await readyz(identity.app);
      expect(answer.status).toBe(503);
      expect(answer.body.checks.migrations).toBe('migrations pending');
    } finally {
      await identity.close();
      url.pathname = '/postgres';
      const admin = new pg.Client({ connectionString: url.toString() });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  });

  it('is 503 on the gateway naming the service that is unreachable', async () => {
    const gateway = await createGateway(
      loadGatewayConfig({ ...system.env, PORT: '0', CONVERSATION_URL: `http://127.0.0.1:${await freePort()}` }),
      logger,
      () => false,
    );
    try {
      const answer = await readyz(gateway.app);
      expect(answer.status).toBe(503);
      expect(answer.body.checks.conversation).not.toBe('ok');
      expect(answer.body.checks.identity).toBe('ok');
    } finally {
      await gateway.close();
    }
  });

  it('is 503 once the process is draining', async () => {
    const identity = await createIdentityService(loadIdentityConfig(system.env), logger, () => true);
    try {
      const answer = await readyz(identity.app);
      expect(answer).toEqual({ status: 503, body: { status: 'draining' } });
    } finally {
      await identity.close();
    }
  });
});
