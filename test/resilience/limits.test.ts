/**
 * The gateway's limits. Rate limit: off by default; when set, one budget per application shared by
 * every gateway replica (Redis), other applications unaffected, RateLimit headers on every answer,
 * 429 with Retry-After, refused requests never reach a service, and a Redis outage lets requests
 * through instead of failing them. Bodies: over 10 MB refused at the gateway from Content-Length
 * before anything is forwarded, chunked ones refused by the service, uploads held to their own
 * limit only; never a 500 or a hang. A client still sending a refused body reads the whole 413:
 * the rest is read and thrown away, for at most 5 s or 4× the limit, then the connection is cut. Slow clients: dribbled headers or bodies are cut off with 408
 * while others are served, and a slow service is not mistaken for a slow client.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createHttpServer, createLogger } from '@collab/shared';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { asCustomer, createApplication, request, type ApiResponse, type TestApplication } from '../support/client.js';
import { snapshotDatabase } from '../support/db-snapshot.js';
import { expectError } from '../support/expect.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';
import { chunked, repeatedBytes, sendWholeBody } from '../support/whole-body-client.js';

const TEN_MB = 10 * 1024 * 1024;

let system: TestSystem;
let app: TestApplication;
let other: TestApplication;
const cleanups: (() => Promise<unknown>)[] = [];
let privateRedis: PrivateRedis | null = null;

systemWithApplication('limited app', async (started) => {
  ({ system, app } = started);
  other = await createApplication(system, 'other app');
  expect((await app.client.put('/v1/users/ann', { name: 'Ann' })).status).toBe(200);
}, {
  beforeStop: async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await privateRedis?.stop();
  },
});

/** Closes a server and every connection still open on it. */
function closeServer(server: http.Server | net.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    if (server instanceof http.Server) server.closeAllConnections();
  });
}

/**
 * One more gateway replica of this system with some settings replaced, listening as main-api's
 * does (the shared server factory with the gateway's server options); closed after the file.
 */
async function startGateway(overrides: Record<string, string>): Promise<string> {
  const gateway = await createGateway(loadGatewayConfig({ ...system.env, ...overrides }), createLogger('test', 'silent'), () => false);
  const server = createHttpServer(gateway.app, gateway.serverOptions);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(async () => {
    await closeServer(server);
    await gateway.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A stand-in for a service: answers every request with `answer`, counting them; closed after the file. */
async function startStub(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const stub = { url: '', requests: 0 };
  const server = http.createServer((req, res) => {
    stub.requests++;
    answer(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => closeServer(server));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return stub;
}

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/**
 * Sends a request whose body is written by `send` (which may stop early or dribble), and resolves
 * with the answer once the connection is closed, or `closed` when it closed without an answer.
 */
function rawRequest(
  url: string,
  options: http.RequestOptions,
  send: (req: http.ClientRequest) => void,
): Promise<RawAnswer | 'closed'> {
  return new Promise((resolve) => {
    const req = http.request(url, { agent: false, ...options });
    let answer: RawAnswer | null = null;
    req.on('response', (res) => {
      answer = { status: res.statusCode ?? 0, headers: res.headers, text: '' };
      res.on('data', (chunk: Buffer) => (answer!.text += chunk.toString()));
    });
    // Writing into a connection the server closed fails; the answer, if any, came first.
    req.on('error', () => undefined);
    req.on('close', () => resolve(answer ?? 'closed'));
    send(req);
  });
}

const rateLimitHeaders = (response: ApiResponse) => ({
  policy: response.headers.get('ratelimit-policy'),
  limit: response.headers.get('ratelimit-limit'),
  remaining: response.headers.get('ratelimit-remaining'),
});

describe('the rate limit', () => {
  it('is off by default: many requests in a row, never a 429 and no RateLimit headers', async () => {
    for (let round = 0; round < 15; round++) {
      const responses = await Promise.all(Array.from({ length: 10 }, () => app.client.get('/v1/users/ann')));
      for (const response of responses) {
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit-limit')).toBeNull();
      }
    }
  });

  it('is one budget per application across gateway replicas; other applications and customers have their own', async () => {
    // 5 at once, then one a minute: nothing is earned back while the test runs.
    const limits = { RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '5' };
    const replicas = [await startGateway(limits), await startGateway(limits)];
    const token = await serverToken(app.id, app.secret);
    const put = (replica: string, userId: string) =>
      request(replica, 'PUT', `/v1/users/${userId}`, { token, body: { name: userId } });

    // Alternating replicas, the application spends one budget of 5.
    const allowed: ApiResponse[] = [];
    for (let index = 0; index < 5; index++) allowed.push(await put(replicas[index % 2], `spent-${index}`));
    for (const [index, response] of allowed.entries()) {
      expect(response.status).toBe(200);
      expect(rateLimitHeaders(response)).toEqual({ policy: '5;w=300', limit: '5', remaining: String(4 - index) });
      const reset = Number(response.headers.get('ratelimit-reset'));
      expect(Number.isInteger(reset) && reset > 0 && reset <= 300).toBe(true);
    }

    // Spent: both replicas refuse, and nothing reaches a service.
    const before = await snapshotDatabase(system.sql);
    for (const [index, replica] of replicas.entries()) {
      const refused = await put(replica, `refused-${index}`);
      expectError(refused, 429, 'rate_limited');
      expect(rateLimitHeaders(refused)).toEqual({ policy: '5;w=300', limit: '5', remaining: '0' });
      const retryAfter = refused.headers.get('retry-after') ?? '';
      expect(retryAfter).toMatch(/^\d+$/);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(retryAfter)).toBeLessThanOrEqual(60);
      expect(Number(refused.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(Number(retryAfter));
    }
    expect(await snapshotDatabase(system.sql)).toEqual(before);

    // Another application, and the customer (application-management token), start with their own budget.
    const bystander = await request(replicas[0], 'GET', '/v1/users/ann', { token: await serverToken(other.id, other.secret) });
    expectError(bystander, 401, 'user_not_found');
    expect(rateLimitHeaders(bystander)).toEqual({ policy: '5;w=300', limit: '5', remaining: '4' });
    const customer = await asCustomer({ ...system, url: replicas[1] }).get('/v1/applications');
    expect(customer.status).toBe(200);
    expect(rateLimitHeaders(customer)).toEqual({ policy: '5;w=300', limit: '5', remaining: '4' });
  });

  it('lets requests through while Redis is unreachable, and limits again once it is back', async () => {
    privateRedis = await startPrivateRedis();
    const redis = privateRedis;
    const replica = await startGateway({ REDIS_URL: redis.url, RATE_LIMIT_PER_MINUTE: '1', RATE_LIMIT_BURST: '2' });
    const token = await serverToken(app.id, app.secret);
    const call = () => request(replica, 'GET', '/v1/users/ann', { token });
    /**
     * The first answer the limiter counted (it carries the RateLimit headers). Until the limiter's
     * own connection is up, at the gateway's start as after an outage, requests go through
     * uncounted.
     */
    const firstCounted = async (what: string) => {
      const deadline = Date.now() + 15_000;
      let response = await call();
      while (response.headers.get('ratelimit-limit') === null) {
        if (Date.now() > deadline) throw new Error(what);
        await new Promise((resolve) => setTimeout(resolve, 100));
        response = await call();
      }
      return response;
    };

    expect((await firstCounted('the rate limit did not start')).status).toBe(200);
    expect((await call()).status).toBe(200);
    expectError(await call(), 429, 'rate_limited');

    await redis.stop('SIGKILL');
    for (let index = 0; index < 5; index++) {
      const response = await call();
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-limit')).toBeNull();
    }

    // Back, empty: the limiter reconnects and counts again from a whole budget.
    await redis.start();
    expect((await firstCounted('the rate limit did not come back with Redis')).status).toBe(200);
    expect((await call()).status).toBe(200);
    expectError(await call(), 429, 'rate_limited');
  });
});

describe('request bodies', () => {
  it('over 10 MB by Content-Length: 413 from the gateway before a byte is forwarded, and the connection closed', async () => {
    const services = await startStub((_req, res) => res.writeHead(500).end());
    const replica = await startGateway({ IDENTITY_URL: services.url, CONVERSATION_URL: services.url, NOTIFICATION_URL: services.url });
    const answer = await rawRequest(
      `${replica}/v1/users/huge`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}`, 'content-type': 'application/json', 'content-length': String(TEN_MB + 1) },
      },
      // Only the start of the body: the answer must not wait for the rest.
      (req) => req.write('{"name": "'),
    );
    expect(answer).not.toBe('closed');
    const { status, headers, text } = answer as RawAnswer;
    expect(headers.connection).toBe('close');
    expectError({ status, headers: new Headers(), body: JSON.parse(text) }, 413, 'payload_too_large', 'Request body is larger than 10 MB.');
    // Neither the credentials lookup nor the proxy called a service.
    expect(services.requests).toBe(0);
  });

  it('over 10 MB with the whole body sent: the client reads the 413, nothing stored', async () => {
    const before = await snapshotDatabase(system.sql);
    const response = await request(system.url, 'PUT', '/v1/users/huge', {
      token: await serverToken(app.id, app.secret),
      rawBody: JSON.stringify({ name: 'x'.repeat(TEN_MB) }),
      headers: { 'content-type': 'application/json' },
    });
    expectError(response, 413, 'payload_too_large');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });

  it('over 10 MB without a Content-Length (chunked): 413 from the service, nothing stored', async () => {
    const before = await snapshotDatabase(system.sql);
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    const answer = await rawRequest(
      `${system.url}/v1/users/chunked`,
      { method: 'PUT', headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}`, 'content-type': 'application/json' } },
      (req) => {
        req.write('{"name": "');
        for (let index = 0; index < 11; index++) req.write(chunk);
        req.end('"}');
      },
    );
    expect(answer).not.toBe('closed');
    const { status, text } = answer as RawAnswer;
    expectError({ status, headers: new Headers(), body: JSON.parse(text) }, 413, 'payload_too_large');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });

  /** The head of a PUT of a user, as a client writing on a raw socket sends it. */
  const putUserHead = async (userId: string, framing: string) =>
    `PUT /v1/users/${userId} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${await serverToken(app.id, app.secret)}\r\n` +
    `Content-Type: application/json\r\n${framing}\r\n\r\n`;

  it.each([
    ['with a Content-Length, refused by the gateway', `Content-Length: ${12 * 1024 * 1024}`, () => repeatedBytes(12 * 1024 * 1024)],
    ['chunked, refused by the service', 'Transfer-Encoding: chunked', () => chunked(repeatedBytes(12 * 1024 * 1024))],
  ])('12 MB %s, written whole before the answer is read: the client reads the complete 413, no broken pipe', async (_, framing, body) => {
    const before = await snapshotDatabase(system.sql);
    const exchange = await sendWholeBody(system.url, await putUserHead('whole', framing), body());
    // The server read the whole body: no write failed.
    expect(exchange.writeError).toBeNull();
    expect(exchange.bytesWritten).toBeGreaterThan(12 * 1024 * 1024);
    expect(exchange.answer).not.toBeNull();
    const { status, headers, body: answer } = exchange.answer!;
    // The connection closes once the body has been read.
    expect(headers.connection).toBe('close');
    expectError({ status, headers: new Headers(), body: answer }, 413, 'payload_too_large', 'Request body is larger than 10 MB.');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  }, 30_000);

  it.each([
    ['with a Content-Length, refused by the gateway', `Content-Length: ${200 * 1024 * 1024}`, () => repeatedBytes(200 * 1024 * 1024)],
    ['chunked, refused by the service', 'Transfer-Encoding: chunked', () => chunked(repeatedBytes(200 * 1024 * 1024))],
  ])('200 MB %s: after the 413 the server reads and discards 4× the limit, then closes instead of reading on', async (_, framing, body) => {
    const size = 200 * 1024 * 1024;
    const exchange = await sendWholeBody(system.url, await putUserHead('endless', framing), body());
    expect(exchange.answer?.status).toBe(413);
    expect(exchange.answer?.body).toEqual({ error: 'payload_too_large', message: 'Request body is larger than 10 MB.' });
    // Read past the limit (the 413 is not followed by closing at once)…
    expect(exchange.bytesWritten).toBeGreaterThan(4 * TEN_MB);
    // …but not to the end: what socket buffers took is far less than the other half.
    expect(exchange.bytesWritten).toBeLessThan(size / 2);
    expect(exchange.writeError).not.toBeNull();
  }, 60_000);

  it('a client that keeps sending slowly is read for a while after the 413, then cut off', async () => {
    const size = 20 * 1024 * 1024;
    const piece = Buffer.alloc(16 * 1024, 'x');
    // 16 KB every 20 ms: the whole body would take 25 s.
    async function* slowly(): AsyncGenerator<Buffer> {
      for (let sent = 0; sent < size; sent += piece.length) {
        yield piece;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    const exchange = await sendWholeBody(system.url, await putUserHead('slow', `Content-Length: ${size}`), slowly());
    expect(exchange.answer?.status).toBe(413);
    // The server kept reading once it had answered (more than socket buffers hold)…
    expect(exchange.bytesWritten - exchange.bytesWrittenAtAnswer!).toBeGreaterThan(1024 * 1024);
    // …and closed the connection before the client was done.
    expect(exchange.bytesWritten).toBeLessThan(size);
  }, 60_000);

  it('file uploads are not held to 10 MB: an 11 MB file is stored', async () => {
    const data = randomBytes(11 * 1024 * 1024);
    const boundary = `----limits${randomBytes(8).toString('hex')}`;
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="ownerID"\r\n\r\nann\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      data,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const response = await fetch(`${system.url}/v1/files`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await serverToken(app.id, app.secret)}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(body.length),
      },
      body,
    });
    const answer = (await response.json()) as { fileID: string };
    expect(response.status, JSON.stringify(answer)).toBe(200);
    const { rows } = await system.sql.query(`SELECT size::int AS size FROM conversation.files WHERE id = $1`, [answer.fileID]);
    expect(rows).toEqual([{ size: data.length }]);
  });
});

describe('slow clients and slow services', () => {
  let replica: string;
  beforeAll(async () => {
    replica = await startGateway({ REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '500' });
  });

  it('a body dribbled past REQUEST_TIMEOUT_MS: 408 and the connection closed, while others are served', async () => {
    const body = JSON.stringify({ name: 'Slow Sam' }).padEnd(200, ' ');
    let dribble: NodeJS.Timeout | undefined;
    const slow = rawRequest(
      `${replica}/v1/users/slow-sam`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}`, 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (req) => {
        let sent = 0;
        // One byte every 100 ms: the whole body would take 20 s.
        dribble = setInterval(() => {
          if (req.destroyed) return;
          req.write(body[sent++]);
        }, 100);
      },
    );
    // Another client meanwhile, on the same gateway.
    expect((await request(replica, 'GET', '/v1/users/ann', { token: await serverToken(app.id, app.secret) })).status).toBe(200);
    const answer = await slow;
    clearInterval(dribble);
    if (answer !== 'closed') {
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.text)).toEqual({ error: 'request_timeout', message: 'The request was not received in time.' });
    }
    expectError(await request(replica, 'GET', '/v1/users/slow-sam', { token: await serverToken(app.id, app.secret) }), 401, 'user_not_found');
  });

  it('headers dribbled past HEADERS_TIMEOUT_MS: 408 and the connection closed', async () => {
    const socket = net.connect(Number(new URL(replica).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET /v1/users/ann HTTP/1.1\r\nHost: gateway\r\n');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const dribble = setInterval(() => {
      if (!socket.destroyed) socket.write('X-Slow: 1\r\n');
    }, 100);
    await once(socket, 'close');
    clearInterval(dribble);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    // Node refused it before any handler ran; the answer is still the API's error envelope.
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toEqual({
      error: 'request_timeout',
      message: 'The request was not received in time.',
    });
  });

  it('a service slower than REQUEST_TIMEOUT_MS is waited for: the client sent its request in time', async () => {
    const slowIdentity = await startStub((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"answer":"late"}'), 2500);
    });
    const slowReplica = await startGateway({ IDENTITY_URL: slowIdentity.url, REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '500' });
    const response = await request(slowReplica, 'POST', '/v1/authorize', { body: { signed_app_token: 'a.b.c' }, fromStandIn: true });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ answer: 'late' });
  });
});
