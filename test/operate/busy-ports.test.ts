/**
 * A taken port: a service process whose service and metrics ports another program holds logs which
 * port is taken and tries again instead of exiting or running without metrics; the gateway's
 * /readyz names the port instead of a bare status; once the ports are free, the process binds
 * both and is ready.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http, { type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@collab/shared';
import { until } from '@collab/shared/devkit';
import { afterAll, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import { systemForFile, type TestSystem } from '../support/system.js';

let system: TestSystem;
let identity: ChildProcess | undefined;

systemForFile((started) => (system = started), { workers: false });

afterAll(async () => {
  if (identity) await stopProcess(identity);
  killAll();
});

/** Another program on a port: an HTTP server that knows none of our paths. */
async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = http.createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page\n'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    release: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readyz(app: RequestListener): Promise<{ status: number; body: { checks: Record<string, string> } }> {
  const server = http.createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`);
    return { status: response.status, body: (await response.json()) as { checks: Record<string, string> } };
  } finally {
    server.close();
  }
}

it('a process whose ports are taken names them, tries again, and is ready once they are free', async () => {
  const [servicePort, metricsPort] = [await holdPort(), await holdPort()];
  let output = '';
  identity = spawnServiceProcess(
    'identity',
    'main-api',
    { ...system.env, HOST: '127.0.0.1', PORT: String(servicePort.port), METRICS_PORT: String(metricsPort.port), LOG_LEVEL: 'info' },
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  identity.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  identity.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));

  // Both taken ports are named in the log, more than once (tried again), and the process runs on.
  await until(
    async () =>
      output.split(`service: port ${servicePort.port} is taken; trying again`).length > 2 &&
      output.includes(`metrics: port ${metricsPort.port} is taken; trying again`),
    'both taken ports logged, the service port twice',
    60_000,
    50,
  );
  expect(identity.exitCode).toBeNull();

  // The gateway's readiness names the taken port of the service.
  const gateway = await createGateway(
    loadGatewayConfig({ ...system.env, PORT: '0', IDENTITY_URL: `http://127.0.0.1:${servicePort.port}` }),
    createLogger('test', 'silent'),
    () => false,
  );
  try {
    const answer = await readyz(gateway.app);
    expect(answer.status).toBe(503);
    expect(answer.body.checks.identity).toContain(`port ${servicePort.port} is taken by another program (it answered 404)`);
  } finally {
    await gateway.close();
  }

  // Freed, both ports are bound by the process: it answers its readiness and its metrics.
  await servicePort.release();
  await metricsPort.release();
  await until(async () => (await fetch(`http://127.0.0.1:${servicePort.port}/readyz`).catch(() => null))?.status === 200, 'the service ready on its port', 60_000, 100);
  await until(async () => (await fetch(`http://127.0.0.1:${metricsPort.port}/metrics`).catch(() => null))?.status === 200, 'the metrics served on their port', 60_000, 100);
  expect(identity.exitCode).toBeNull();
}, 180_000);
