/**
 * The outbound client against real HTTP servers on 127.0.0.1 (and 127.0.0.2, also loopback on
 * Linux): non-public addresses are refused whether reached as IP literals, through host names or
 * through redirects, unless exempted; only http and https leave; redirects are limited and rewrite
 * the method as browsers do; one deadline covers the whole call; bodies are cut or refused at the
 * limit; a content-type filter fails before the body; and every socket is closed afterwards.
 */
import { once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRefusedAddress, parseCidrList } from './address-policy.js';
import { createOutboundClient, type HostResolver, type OutboundRequest } from './outbound-client.js';
import { OutboundError, type OutboundErrorKind } from './outbound-error.js';

interface Receiver {
  origin: string;
  port: number;
  /** Paths requested so far, in order. */
  requests: string[];
  /** Resolves when the socket of the last request has closed on the receiver's side. */
  lastSocketClosed(): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * A receiver with one behaviour per path:
 * /echo answers what it received; /redirect?status=&to= redirects; /chain/<n> redirects n times;
 * /bytes/<n> sends n bytes; /html is a page; /json-unfinished and /unfinished send headers and
 * never finish; /hang never answers; /trickle sends a byte every 20 ms forever.
 */
async function startReceiver(host: string): Promise<Receiver> {
  const requests: string[] = [];
  let socketClosed: Promise<unknown> = Promise.resolve();
  const drip = new Set<NodeJS.Timeout>();
  const server = http.createServer(async (req: IncomingMessage, res: ServerResponse) => {
    requests.push(req.url ?? '');
    // Not `once(socket, 'close')`: it rejects on the ECONNRESET a client that cuts the connection
    // while this side writes may cause first, and a cut connection is what the tests wait for.
    socketClosed = new Promise((resolve) => req.socket.once('close', resolve));
    const url = new URL(req.url ?? '/', 'http://receiver');
    const [, route, arg] = url.pathname.split('/');
    switch (route) {
      case 'echo': {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            method: req.method,
            body: Buffer.concat(chunks).toString(),
            contentType: req.headers['content-type'] ?? null,
            acceptEncoding: req.headers['accept-encoding'] ?? null,
          }),
        );
        return;
      }
      case 'redirect':
        res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/echo' });
        res.end();
        return;
      case 'chain':
        if (Number(arg) === 0) res.end('end of chain');
        else res.writeHead(302, { location: `/chain/${Number(arg) - 1}` }).end();
        return;
      case 'bytes':
        res.end('x'.repeat(Number(arg)));
        return;
      case 'html':
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end('<html><title>page</title></html>');
        return;
      case 'json-unfinished':
        res.setHeader('content-type', 'application/json');
        res.write('{"never":');
        return;
      case 'unfinished':
        res.write('started');
        return;
      case 'hang':
        return;
      case 'trickle': {
        res.write('x');
        const timer = setInterval(() => res.write('x'), 20);
        drip.add(timer);
        res.once('close', () => {
          clearInterval(timer);
          drip.delete(timer);
        });
        return;
      }
      default:
        res.writeHead(404).end();
    }
  });
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    port,
    requests,
    lastSocketClosed: () => socketClosed,
    close: async () => {
      for (const timer of drip) clearInterval(timer);
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

let receiver: Receiver;
let other: Receiver;

beforeAll(async () => {
  receiver = await startReceiver('127.0.0.1');
  other = await startReceiver('127.0.0.2');
});

afterAll(async () => {
  await receiver.close();
  await other.close();
});

const exempting = (cidrs: string, resolveHost?: HostResolver) =>
  createOutboundClient({ allowedCidrs: parseCidrList(cidrs), resolveHost });
const loopbackExempt = exempting('127.0.0.0/8');
const noExemption = exempting('');

const get = (url: string, options: Partial<OutboundRequest> = {}): OutboundRequest => ({
  url,
  timeoutMs: 5000,
  maxBodyBytes: 64 * 1024,
  overLimit: 'truncate',
  ...options,
});

async function failure(call: Promise<unknown>): Promise<OutboundError> {
  const error = await call.then(
    () => {
      throw new Error('expected the request to fail, but it succeeded');
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

async function expectFailure(call: Promise<unknown>, kind: OutboundErrorKind, message?: string) {
  const error = await failure(call);
  expect({ kind: error.kind, message: message === undefined ? undefined : error.message }).toEqual({ kind, message });
}

const blockedMessage = (address: string) => `Call refused: ${describeRefusedAddress(address)}.`;

describe('addresses', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['10.0.0.1', '10.0.0.1'],
    ['192.168.1.1', '192.168.1.1'],
    ['172.16.0.1', '172.16.0.1'],
    ['169.254.169.254', '169.254.169.254'],
    ['0.0.0.0', '0.0.0.0'],
    ['[::1]', '::1'],
    ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
  ])('refuses the IP literal %s, naming it', async (host, address) => {
    await expectFailure(noExemption.request(get(`http://${host}:${receiver.port}/echo`)), 'blocked_address', blockedMessage(address));
  });

  it('refuses the receiver on 127.0.0.1 before it receives anything, unless 127.0.0.0/8 is exempted', async () => {
    const before = receiver.requests.length;
    await expectFailure(noExemption.request(get(`${receiver.origin}/echo`)), 'blocked_address', blockedMessage('127.0.0.1'));
    expect(receiver.requests.length).toBe(before);

    const response = await loopbackExempt.request(get(`${receiver.origin}/echo`));
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toMatchObject({ method: 'GET' });
  });

  it('refuses localhost, checked after the system resolver answered', async () => {
    const error = await failure(noExemption.request(get(`http://localhost:${receiver.port}/echo`)));
    expect(error.kind).toBe('blocked_address');
    expect(error.message).toMatch(/^Call refused: (127\.0\.0\.1 is a loopback address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range \(e\.g\. 127\.0\.0\.0\/8\)|::1 is a loopback address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range \(e\.g\. ::1\/128\))\.$/);
  });

  it.each([
    ['the cloud metadata address', '169.254.169.254'],
    ['a private address', '10.1.2.3'],
  ])('refuses a host name resolving to %s, over http and https', async (_label, address) => {
    const client = exempting('127.0.0.0/8', async () => [address]);
    await expectFailure(client.request(get(`http://made-up.test:${receiver.port}/echo`)), 'blocked_address', blockedMessage(address));
    await expectFailure(client.request(get('https://made-up.test/echo')), 'blocked_address', blockedMessage(address));
  });

  it('connects to the address it checked: a made-up name resolving to an exempted address reaches it', async () => {
    const client = exempting('127.0.0.1/32', async () => ['10.0.0.1', '127.0.0.1']);
    const response = await client.request(get(`http://made-up.test:${receiver.port}/echo`));
    expect(response.status).toBe(200);
  });

  it('resolves again for every connection, so a name that turns private on the redirect is refused', async () => {
    const answers = [['127.0.0.1'], ['10.0.0.1']];
    const client = exempting('127.0.0.1/32', async () => answers.shift() ?? []);
    const to = `http://rebinding.test:${receiver.port}/echo`;
    await expectFailure(
      client.request(get(`http://rebinding.test:${receiver.port}/redirect?to=${encodeURIComponent(to)}`)),
      'blocked_address',
      blockedMessage('10.0.0.1'),
    );
    expect(answers).toEqual([]);
  });

  it('checks a redirect target again: 127.0.0.1 exempted does not let a redirect reach 127.0.0.2', async () => {
    const redirect = `${receiver.origin}/redirect?to=${encodeURIComponent(`${other.origin}/echo`)}`;
    const before = other.requests.length;
    await expectFailure(exempting('127.0.0.1/32').request(get(redirect)), 'blocked_address', blockedMessage('127.0.0.2'));
    expect(other.requests.length).toBe(before);

    const response = await loopbackExempt.request(get(redirect));
    expect({ status: response.status, finalUrl: response.finalUrl, redirects: response.redirects }).toEqual({
      status: 200,
      finalUrl: `${other.origin}/echo`,
      redirects: 1,
    });
  });

  it('refuses a redirect to an https URL on a private address', async () => {
    const redirect = `${receiver.origin}/redirect?to=${encodeURIComponent('https://192.168.0.10/')}`;
    await expectFailure(loopbackExempt.request(get(redirect)), 'blocked_address', blockedMessage('192.168.0.10'));
  });

  it('reports an unreachable exempted address as a network error', async () => {
    const closed = http.createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    await once(closed, 'close');
    const error = await failure(loopbackExempt.request(get(`http://127.0.0.1:${port}/`)));
    expect(error.kind).toBe('network');
    expect(error.message).toContain('ECONNREFUSED');
  });
});

describe('schemes', () => {
  it.each(['ftp://example.com/file', 'file:///etc/passwd', 'data:text/plain,hello', 'javascript:alert(1)', 'gopher://example.com/'])(
    'refuses %s',
    async (url) => {
      const scheme = url.slice(0, url.indexOf(':'));
      await expectFailure(loopbackExempt.request(get(url)), 'unsupported_scheme', `URL scheme "${scheme}" is not supported.`);
    },
  );

  it('refuses a redirect to a file URL', async () => {
    const redirect = `${receiver.origin}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`;
    await expectFailure(loopbackExempt.request(get(redirect)), 'unsupported_scheme', 'URL scheme "file" is not supported.');
  });

  it('refuses a URL that does not parse', async () => {
    await expectFailure(loopbackExempt.request(get('not a url')), 'invalid_url', "Invalid URL 'not a url'.");
  });
});

describe('redirects', () => {
  it('follows up to 3 by default, and fails on the 4th', async () => {
    const response = await loopbackExempt.request(get(`${receiver.origin}/chain/3`));
    expect({ body: response.body.toString(), redirects: response.redirects, finalUrl: response.finalUrl }).toEqual({
      body: 'end of chain',
      redirects: 3,
      finalUrl: `${receiver.origin}/chain/0`,
    });
    await expectFailure(loopbackExempt.request(get(`${receiver.origin}/chain/4`)), 'too_many_redirects', 'More than 3 redirects.');
  });

  it('follows as many as the call allows', async () => {
    await expectFailure(loopbackExempt.request(get(`${receiver.origin}/chain/1`, { maxRedirects: 0 })), 'too_many_redirects', 'More than 0 redirects.');
    const response = await loopbackExempt.request(get(`${receiver.origin}/chain/5`, { maxRedirects: 5 }));
    expect(response.redirects).toBe(5);
  });

  it.each([
    [301, 'POST', 'GET'],
    [302, 'POST', 'GET'],
    [303, 'POST', 'GET'],
    [303, 'PUT', 'GET'],
    [301, 'PUT', 'PUT'],
    [307, 'POST', 'POST'],
    [308, 'POST', 'POST'],
  ])('after a %i, a %s continues as a %s', async (status, method, expected) => {
    const response = await loopbackExempt.request(
      get(`${receiver.origin}/redirect?status=${status}&to=/echo`, {
        method,
        headers: { 'Content-Type': 'application/json' },
        body: '{"event":"x"}',
      }),
    );
    const keepsBody = expected !== 'GET';
    expect(JSON.parse(response.body.toString())).toMatchObject({
      method: expected,
      body: keepsBody ? '{"event":"x"}' : '',
      contentType: keepsBody ? 'application/json' : null,
    });
  });
});

describe('limits', () => {
  it('fails at the deadline on a receiver that never answers, and closes the connection', async () => {
    await expectFailure(
      loopbackExempt.request(get(`${receiver.origin}/hang`, { timeoutMs: 200 })),
      'timeout',
      'No complete response within 200 ms.',
    );
    await receiver.lastSocketClosed();
  });

  it('fails at the deadline on a body that trickles in, and closes the connection', async () => {
    await expectFailure(
      loopbackExempt.request(get(`${receiver.origin}/trickle`, { timeoutMs: 300, maxBodyBytes: 1024 * 1024, overLimit: 'fail' })),
      'timeout',
      'No complete response within 300 ms.',
    );
    await receiver.lastSocketClosed();
  });

  it('keeps a body of exactly the limit whole, in both modes', async () => {
    for (const overLimit of ['truncate', 'fail'] as const) {
      const response = await loopbackExempt.request(get(`${receiver.origin}/bytes/10`, { maxBodyBytes: 10, overLimit }));
      expect({ body: response.body.toString(), truncated: response.truncated }).toEqual({ body: 'x'.repeat(10), truncated: false });
    }
  });

  it('cuts a longer body to the limit and marks it truncated', async () => {
    const response = await loopbackExempt.request(get(`${receiver.origin}/bytes/11`, { maxBodyBytes: 10, overLimit: 'truncate' }));
    expect({ body: response.body.toString(), truncated: response.truncated }).toEqual({ body: 'x'.repeat(10), truncated: true });
  });

  it('fails on a longer body when asked to', async () => {
    await expectFailure(
      loopbackExempt.request(get(`${receiver.origin}/bytes/11`, { maxBodyBytes: 10, overLimit: 'fail' })),
      'body_too_large',
      'The response body is larger than 10 bytes.',
    );
  });

  it('stops reading an endless body at the limit and closes the connection', async () => {
    const response = await loopbackExempt.request(get(`${receiver.origin}/trickle`, { maxBodyBytes: 3, overLimit: 'truncate' }));
    expect({ body: response.body.toString(), truncated: response.truncated }).toEqual({ body: 'xxx', truncated: true });
    await receiver.lastSocketClosed();
  });

  it('with a limit of 0, answers when the headers arrive without reading the body', async () => {
    const response = await loopbackExempt.request(get(`${receiver.origin}/unfinished`, { maxBodyBytes: 0, timeoutMs: 5000 }));
    expect({ status: response.status, body: response.body.length, truncated: response.truncated }).toEqual({
      status: 200,
      body: 0,
      truncated: false,
    });
    await receiver.lastSocketClosed();
  });

  it('asks for an uncompressed body, whatever the caller asked', async () => {
    const response = await loopbackExempt.request(get(`${receiver.origin}/echo`, { headers: { 'Accept-Encoding': 'gzip' } }));
    expect(JSON.parse(response.body.toString())).toMatchObject({ acceptEncoding: 'identity' });
  });
});

describe('content types', () => {
  const pages = { acceptContentTypes: ['text/html', 'application/xhtml+xml'], maxBodyBytes: 1024 * 1024, overLimit: 'fail' as const };

  it('reads a response of an accepted type, whatever its parameters', async () => {
    const response = await loopbackExempt.request(get(`${receiver.origin}/html`, pages));
    expect(response.body.toString()).toBe('<html><title>page</title></html>');
  });

  it('fails on another type before reading its body', async () => {
    // The body never ends: reading it would end in a timeout instead.
    await expectFailure(
      loopbackExempt.request(get(`${receiver.origin}/json-unfinished`, pages)),
      'unsupported_content_type',
      'The response content type "application/json" is not one of text/html, application/xhtml+xml.',
    );
    await receiver.lastSocketClosed();
  });

  it('fails on a response without a content type', async () => {
    await expectFailure(
      loopbackExempt.request(get(`${receiver.origin}/bytes/5`, pages)),
      'unsupported_content_type',
      'The response content type (none) is not one of text/html, application/xhtml+xml.',
    );
  });
});

describe('addressRefusal: what registration refuses before any call', () => {
  const resolving = (addresses: Record<string, string[]>): HostResolver => async (hostname) => {
    if (!(hostname in addresses)) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
    return addresses[hostname];
  };

  it('names the address, its range and the setting that would allow it', async () => {
    expect(await noExemption.addressRefusal('http://127.0.0.1:4000/hook')).toBe(
      '127.0.0.1 is a loopback address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range (e.g. 127.0.0.0/8)',
    );
    expect(await noExemption.addressRefusal('http://[fd00::1]/hook')).toBe(
      'fd00::1 is a unique local address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range (e.g. fd00::1/128)',
    );
    const client = exempting('', resolving({ 'hooks.internal': ['10.1.2.3'] }));
    expect(await client.addressRefusal('https://hooks.internal/events')).toBe(
      'hooks.internal (10.1.2.3) is a private address, not public; calls reach it only when OUTBOUND_ALLOWED_CIDRS includes its range (e.g. 10.1.2.3/32)',
    );
  });

  it('refuses nothing the guard would let through: exempted ranges, public addresses, a name with one usable address, a name not resolving yet', async () => {
    expect(await loopbackExempt.addressRefusal('http://127.0.0.1:4000/hook')).toBeNull();
    expect(await noExemption.addressRefusal('https://93.184.215.14/hook')).toBeNull();
    const client = exempting('', resolving({ mixed: ['10.0.0.1', '93.184.215.14'] }));
    expect(await client.addressRefusal('https://mixed/hook')).toBeNull();
    expect(await client.addressRefusal('https://not-yet.example/hook')).toBeNull();
  });
});
