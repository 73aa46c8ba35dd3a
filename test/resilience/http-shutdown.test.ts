/**
 * Graceful shutdown of an HTTP service process: on SIGTERM it stops accepting connections, lets the
 * request in flight finish, closes its connection once answered (a keep-alive client, as the
 * gateway is, would otherwise hold it open past the shutdown deadline) and exits 0. Needs the
 * build (`npm test` builds).
 */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { freePort, until } from '@collab/shared/devkit';
import { type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { killAll, spawnServiceProcess } from '../support/processes.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('test app', (started) => ({ system, app } = started), { beforeStop: killAll });

describe('an identity process receiving SIGTERM', () => {
  it('finishes the request in flight on a keep-alive connection, refuses new connections and exits 0', async () => {
    const port = await freePort();
    const child = spawnServiceProcess('identity', 'main-api', {
      ...system.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      CUSTOMER_ID: system.customer.id,
      CUSTOMER_SECRET: system.customer.secret,
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const keepAlive = new http.Agent({ keepAlive: true });
    const url = `http://127.0.0.1:${port}`;
    await until(() => fetch(`${url}/readyz`).then((response) => response.ok, () => false), `${url} to be ready`, 20_000, 50);

    // A request whose body is still arriving when the signal comes.
    const body = JSON.stringify({ name: 'Slow Sam' });
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(`${url}/v1/users/slow-sam`, {
        // Keeps its idle connections open for as long as the server does, as the gateway's proxy does.
        agent: keepAlive,
        method: 'PUT',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'x-collab-internal-token': system.env.INTERNAL_TOKEN,
          'x-collab-application-id': app.id,
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 5));
      // Signal once the server has had time to read the headers (so the request is in flight,
      // not an idle connection), then complete the body after the signal.
      setTimeout(() => {
        child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 200);
      }, 150);
    });
    const answered = await response;
    expect(answered.status, answered.text).toBe(200);
    expect(JSON.parse(answered.text)).toEqual({ success: true, message: 'You successfully created user slow-sam' });
    // Not 1, which the shutdown deadline's exit would be.
    expect(await exited).toBe(0);
    keepAlive.destroy();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    expect((await app.client.get('/v1/users/slow-sam')).body.name).toBe('Slow Sam');
  }, 60_000);
});
