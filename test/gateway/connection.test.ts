/**
 * The connection itself, spoken byte for byte: a client's `Connection: close` closes the
 * connection after the answer also when a service answered through the gateway (RFC 9112 §9.6),
 * and a CONNECT, which Node hands to no app, is answered 405 in the envelope like any other
 * method the API does not know, by the gateway and by every service.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import type { TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;
let token: string;

systemWithApplication('connection app', async (started) => {
  ({ system, app } = started);
  token = await serverToken(app.id, app.secret);
  expect((await app.client.put('/v1/users/alice', { name: 'Alice' })).status).toBe(200);
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server ended the connection after the answer. */
  ended: boolean;
}

/**
 * Writes `head` on a connection of its own and reads the answer. With `untilEnd`, waits for the
 * server to end the connection (it must, well within the test's time); otherwise stops at the
 * answer's last byte and closes the connection itself.
 */
function exchange(baseUrl: string, head: string, untilEnd: boolean): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    const parse = (ended: boolean): RawAnswer | null => {
      const text = received.toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return null;
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const body = received.subarray(Buffer.byteLength(text.slice(0, split + 4), 'latin1'));
      if (body.length < Number(headers['content-length'] ?? 0)) return null;
      return { status: Number(statusLine.split(' ')[1]), headers, body: body.toString('utf8'), ended };
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = untilEnd ? null : parse(false);
      if (answer) {
        socket.destroy();
        resolve(answer);
      }
    });
    socket.on('end', () => {
      const answer = parse(true);
      if (answer) resolve(answer);
      else reject(new Error(`the connection ended without a complete answer: ${JSON.stringify(received.toString('latin1'))}`));
    });
    socket.on('error', reject);
    socket.write(head);
  });
}

function getUser(connection: string): string {
  const { host } = new URL(system.url);
  return (
    'GET /v1/users/alice HTTP/1.1\r\n' +
    `Host: ${host}\r\n` +
    `Authorization: Bearer ${token}\r\n` +
    (connection ? `Connection: ${connection}\r\n` : '') +
    '\r\n'
  );
}

describe('Connection: close', () => {
  it('an answer from a service through the gateway says close and the gateway ends the connection after it', async () => {
    const answer = await exchange(system.url, getUser('close'), true);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ id: 'alice', name: 'Alice' });
    expect(answer.headers.connection).toBe('close');
    expect(answer.ended).toBe(true);
  });

  it('an answer of the gateway itself (an unknown path) closes too', async () => {
    const answer = await exchange(system.url, getUser('close').replace('/v1/users/alice', '/v1/nowhere'), true);
    expect(answer.status).toBe(404);
    expect(answer.headers.connection).toBe('close');
  });

  it('without it, the connection is kept for the next request', async () => {
    const answer = await exchange(system.url, getUser(''), false);
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('keep-alive');
  });
});

describe('CONNECT', () => {
  const connect = (baseUrl: string) => {
    const { host } = new URL(baseUrl);
    return exchange(baseUrl, `CONNECT example.com:443 HTTP/1.1\r\nHost: ${host}\r\n\r\n`, true);
  };

  it('the gateway answers 405 method_not_allowed in the envelope, with a request id, and closes', async () => {
    const answer = await connect(system.url);
    expect(answer.status).toBe(405);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(answer.body)).toEqual({ error: 'method_not_allowed', message: 'CONNECT is not allowed: this server is not a proxy.' });
    expect(answer.ended).toBe(true);
  });

  it.each(['identity', 'conversation', 'notification', 'webhooks'] as const)('the %s service answers it the same way', async (service) => {
    const answer = await connect(system.serviceUrls[service]);
    expect(answer.status).toBe(405);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'method_not_allowed' });
  });

  it('the gateway keeps answering afterwards', async () => {
    await connect(system.url);
    expect((await app.client.get('/v1/users/alice')).status).toBe(200);
  });
});
