/**
 * The service-to-service client against real HTTP servers: a dependency that is refused, hangs or
 * fails answers 503; one that answers something else than JSON, or breaks its answer off, 502; an
 * API error comes back with its own code; calls reuse their connection.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, createInternalClient } from '@collab/shared';
import { afterEach, describe, expect, it } from 'vitest';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const client = (baseUrl: string, timeoutMs = 5000) => createInternalClient({ baseUrl, internalToken: 'token', service: 'identity', timeoutMs });

async function failure(promise: Promise<unknown>): Promise<{ code: string; status: number }> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ApiError);
  return { code: (error as ApiError).code, status: (error as ApiError).status };
}

describe('the internal client', () => {
  it('sends the headers and the JSON body, and answers the JSON answer; calls reuse their connection', async () => {
    const seen: { headers: http.IncomingHttpHeaders; body: string; socket: unknown }[] = [];
    const url = await serve(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      seen.push({ headers: req.headers, body, socket: req.socket });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ echoed: body === '' ? null : JSON.parse(body) }));
    });
    const identity = client(url);
    expect(await identity.call('POST', '/internal/x', { body: { a: 'é' }, requestId: 'r-1', applicationId: 'app' })).toEqual({ echoed: { a: 'é' } });
    expect(await identity.call('GET', '/internal/y')).toEqual({ echoed: null });
    expect(seen[0].headers).toMatchObject({ 'x-collab-internal-token': 'token', 'content-type': 'application/json' });
    expect(seen[0].socket).toBe(seen[1].socket);
  });

  it('re-raises an API error with its code and status', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'not_found', message: 'No such thing.' }));
    });
    expect(await failure(client(url).call('GET', '/internal/x'))).toEqual({ code: 'not_found', status: 404 });
  });

  it('answers 503 for a refused connection, a 5xx and a dependency that does not answer in time', async () => {
    const closed = await serve((_req, res) => res.end());
    servers[0].close();
    await once(servers[0], 'close');
    servers.length = 0;
    expect(await failure(client(closed).call('GET', '/internal/x'))).toEqual({ code: 'service_unavailable', status: 503 });
    const failing = await serve((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'internal_error', message: 'boom' }));
    });
    expect(await failure(client(failing).call('GET', '/internal/x'))).toEqual({ code: 'service_unavailable', status: 503 });
    // A URL that was never configured, or that node:http cannot take, reaches nothing either.
    for (const unusable of ['', 'ftp://127.0.0.1:1'])
      expect(await failure(client(unusable).call('GET', '/internal/x'))).toEqual({ code: 'service_unavailable', status: 503 });
    const silent = await serve(() => undefined);
    expect(await failure(client(silent, 200).call('GET', '/internal/x'))).toEqual({ code: 'service_unavailable', status: 503 });
  });

  it('answers 502 for an answer that is not JSON or breaks off', async () => {
    const text = await serve((_req, res) => res.end('<html>'));
    expect(await failure(client(text).call('GET', '/internal/x'))).toEqual({ code: 'bad_gateway', status: 502 });
    const broken = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setImmediate(() => res.socket?.destroy());
    });
    expect(await failure(client(broken).call('GET', '/internal/x'))).toEqual({ code: 'bad_gateway', status: 502 });
  });
});
