/**
 * Bad input never breaks the API (issue #7, point 3), the targeted cases beside the random ones of
 * fuzz-routes.test.ts: bodies nested 100,000 levels deep (through the gateway and straight into
 * each service), bodies of 10 MB + 1 byte and of 50 MB, malformed JSON, wrong content types, empty
 * bodies, non-object JSON, invalid UTF-8 (refused, never stored as U+FFFD), huge headers and methods the route table does not know.
 * Each answer is below 500 and, where the API answers, exactly the error envelope with an
 * `X-Request-Id`; afterwards every process still answers a health check and a normal request, and
 * a connection whose body was refused unread does not stall the next request on it.
 */
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { INTERNAL_HEADERS, MAX_JSON_BODY_BYTES, ROUTES, type RouteDef } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApplication } from '../support/client.js';
import { snapshotDatabase } from '../support/db-snapshot.js';
import { expectEnvelope, parseJson, startFuzzSystem, type Answer, type RouteTokens } from '../support/fuzz.js';
import type { TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;
let tokens: RouteTokens;

const DEADLINE_MS = 10_000;

/**
 * One request over its own connection, written byte for byte (any method, a body of any bytes).
 * Writing stops once the answer begins, as a client does when a server refuses a body early; the
 * answer must arrive before the deadline.
 */
function exchange(baseUrl: string, head: string, body: Buffer = Buffer.alloc(0)): Promise<Answer & { closed: boolean }> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const received: Buffer[] = [];
    let answered = false;
    const timer = setTimeout(() => socket.destroy(new Error(`no answer within ${DEADLINE_MS} ms: ${head.split('\r\n')[0].slice(0, 200)}`)), DEADLINE_MS);
    const parser = new ResponseReader();
    socket.on('data', (chunk: Buffer) => {
      answered = true;
      received.push(chunk);
      const answer = parser.read(Buffer.concat(received));
      if (answer) {
        clearTimeout(timer);
        resolve({ ...answer, closed: false });
        socket.destroy();
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const answer = parser.read(Buffer.concat(received), true);
      if (answer) resolve({ ...answer, closed: true });
      else reject(new Error(`connection closed without a complete answer: ${Buffer.concat(received).toString('latin1').slice(0, 300)}`));
    });
    // A refused upload ends in EPIPE/ECONNRESET on our side; the answer decides the outcome.
    socket.on('error', () => undefined);
    socket.on('connect', async () => {
      socket.write(head);
      for (let offset = 0; offset < body.length && !answered && !socket.destroyed; offset += 256 * 1024) {
        if (!socket.write(body.subarray(offset, offset + 256 * 1024))) await new Promise((done) => socket.once('drain', done));
      }
    });
  });
}

/** Reads one HTTP/1.1 response (Content-Length or chunked) from the bytes received so far. */
class ResponseReader {
  read(bytes: Buffer, atEnd = false): Answer | null {
    const split = bytes.indexOf('\r\n\r\n');
    if (split < 0) return null;
    const [statusLine, ...lines] = bytes.subarray(0, split).toString('latin1').split('\r\n');
    const headers: http.IncomingHttpHeaders = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    let rest = bytes.subarray(split + 4);
    let payload: Buffer;
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (rest.length < length) return null;
      payload = rest.subarray(0, length);
    } else if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        if (lineEnd < 0) return null;
        const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
        if (size === 0) break;
        if (rest.length < lineEnd + 2 + size + 2) return null;
        parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        rest = rest.subarray(lineEnd + 2 + size + 2);
      }
      payload = Buffer.concat(parts);
    } else if (atEnd) payload = rest;
    else return null;
    const text = payload.toString('utf8');
    return { status: Number(statusLine.split(' ')[1]), headers, text, body: parseJson(text) };
  }
}

interface RequestSpec {
  method: string;
  path: string;
  token?: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Sends the body chunked instead of with a Content-Length. */
  chunked?: boolean;
}

function requestHead({ method, path, token, headers = {}, body, chunked }: RequestSpec, host: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${host}`, 'Connection: keep-alive'];
  if (token) lines.push(`Authorization: Bearer ${token}`);
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined && !chunked) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  if (chunked) lines.push('Transfer-Encoding: chunked');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function chunkedBody(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < body.length; offset += 64 * 1024) {
    const chunk = body.subarray(offset, offset + 64 * 1024);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function call(baseUrl: string, spec: RequestSpec) {
  const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
  return exchange(baseUrl, requestHead(spec, new URL(baseUrl).host), body && spec.chunked ? chunkedBody(body) : body);
}

const jsonRoutes = ROUTES.filter((route) => route.body && route.bodyType !== 'multipart');
/** A path of `route` with valid-looking ids, so that the body is what is judged. */
const pathOf = (route: RouteDef) => route.path.replace(/:(\w+)/g, (_, name: string) => (name === 'applicationID' ? app.id : `fuzz-${name}`));
const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

async function expectAllAlive(): Promise<void> {
  for (const url of [system.url, ...Object.values(system.serviceUrls)]) {
    const health = await call(url, { method: 'GET', path: '/healthz' });
    expect(health.status, url).toBe(200);
  }
  const users = await call(system.url, { method: 'PUT', path: '/v1/users/still-here', token: tokens.app, headers: { 'content-type': 'application/json' }, body: '{"name":"Still Here"}' });
  expect(users.status, users.text).toBe(200);
  const read = await call(system.url, { method: 'GET', path: '/v1/users/still-here', token: tokens.app });
  expect((read.body as { name: string }).name).toBe('Still Here');
}

beforeAll(async () => {
  ({ system, app, tokens } = await startFuzzSystem('fuzz bodies'));
});
afterAll(() => system?.stop());

describe('a body nested 100,000 levels deep', () => {
  const bodies = { arrays: `{"a":${nestedArrays(100_000)}}`, objects: nestedObjects(100_000) };

  it('is refused with 400 invalid_request by every JSON route through the gateway', async () => {
    const before = await snapshotDatabase(system.sql);
    for (const route of jsonRoutes)
      for (const [kind, body] of Object.entries(bodies)) {
        const answer = await call(system.url, { method: route.method, path: pathOf(route), token: tokens[route.auth], headers: { 'content-type': 'application/json' }, body });
        expectEnvelope(answer);
        // Checks the API orders before the body (an unknown group) may answer first.
        if (answer.status === 400) expect((answer.body as { error: string }).error, `${route.id} ${kind}`).toBe('invalid_request');
      }
    expect(await snapshotDatabase(system.sql)).toEqual(before);
    await expectAllAlive();
  }, 60_000);

  it('is refused by every service when sent to it directly, and every process keeps answering', async () => {
    for (const route of jsonRoutes)
      for (const body of Object.values(bodies)) {
        const answer = await call(system.serviceUrls[route.service], {
          method: route.method,
          path: pathOf(route),
          headers: {
            'content-type': 'application/json',
            [INTERNAL_HEADERS.internalToken]: system.env.INTERNAL_TOKEN,
            [INTERNAL_HEADERS.applicationId]: app.id,
            [INTERNAL_HEADERS.customerId]: system.customer.id,
          },
          body,
        });
        expectEnvelope(answer);
      }
    await expectAllAlive();
  }, 60_000);

  it('in a query filter is refused as an invalid filter', async () => {
    const answer = await call(system.url, { method: 'GET', path: `/v1/users?filter=${nestedArrays(7000)}`, token: tokens.app });
    expectEnvelope(answer, 400, 'invalid_field');
  });
});

describe('bodies over 10 MB', () => {
  const oversized = (bytes: number) => Buffer.from(`{"name":"${'x'.repeat(bytes - 11)}"}`);

  it.each([
    ['10 MB + 1 byte', MAX_JSON_BODY_BYTES + 1],
    ['50 MB', 50 * 1024 * 1024],
  ])('%s: 413 payload_too_large through the gateway and from a service, nothing stored', async (_, bytes) => {
    const before = await snapshotDatabase(system.sql);
    const body = oversized(bytes);
    expect(body.length).toBe(bytes);
    const viaGateway = await call(system.url, { method: 'PUT', path: '/v1/groups/too-large', token: tokens.app, headers: { 'content-type': 'application/json' }, body });
    expectEnvelope(viaGateway, 413, 'payload_too_large');
    const direct = await call(system.serviceUrls.identity, {
      method: 'PUT',
      path: '/v1/groups/too-large',
      headers: { 'content-type': 'application/json', [INTERNAL_HEADERS.internalToken]: system.env.INTERNAL_TOKEN, [INTERNAL_HEADERS.applicationId]: app.id },
      body,
    });
    expectEnvelope(direct, 413, 'payload_too_large');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
    await expectAllAlive();
  }, 60_000);

  it('sent chunked (no Content-Length): 413 payload_too_large from the service that counts it', async () => {
    const answer = await call(system.url, { method: 'PUT', path: '/v1/groups/too-large', token: tokens.app, headers: { 'content-type': 'application/json' }, body: oversized(MAX_JSON_BODY_BYTES + 1), chunked: true });
    expectEnvelope(answer, 413, 'payload_too_large');
    await expectAllAlive();
  }, 60_000);

  it('leaves the connection usable or closed, never stalled: the next request is answered promptly', async () => {
    // A body a route does not read (no body, or a check that answers first) on a keep-alive connection.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const big = JSON.stringify({ padding: 'x'.repeat(9 * 1024 * 1024) });
    const send = (method: string, path: string, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${system.url}${path}`, { method, agent, headers: { authorization: `Bearer ${tokens.app}`, 'content-type': 'application/json', ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } });
        req.on('response', (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      const unread = [
        ['DELETE', '/v1/organizations/nobody-knows'],
        ['GET', '/v1/groups'],
        ['PUT', '/v1/groups/cord:reserved'],
        ['POST', '/v1/files'],
        ['GET', '/v1/no-such-route'],
      ];
      for (const [method, path] of unread) {
        expect(await send(method, path, big)).toBeLessThan(500);
        const started = Date.now();
        expect(await send('GET', '/v1/groups')).toBe(200);
        // A stalled connection is only reset by the keep-alive timeout (5 s here, 65 s in production).
        expect(Date.now() - started, `${method} ${path}`).toBeLessThan(3000);
      }
    } finally {
      agent.destroy();
    }
  }, 60_000);
});

describe('malformed and non-object bodies', () => {
  const cases: [string, string | Buffer][] = [
    ['truncated', '{"name":"Ann'],
    ['trailing garbage', '{"name":"Ann"} x'],
    ['two documents', '{"name":"Ann"}{"name":"Bob"}'],
    ['NaN', '{"name":NaN}'],
    ['bare NaN', 'NaN'],
    ['single quotes', "{'name':'Ann'}"],
    ['a comment', '{"name":"Ann" /* hi */}'],
    ['a trailing comma', '{"name":"Ann",}'],
    ['only a byte-order mark', Buffer.from([0xef, 0xbb, 0xbf])],
    ['a byte-order mark in the middle', '{"name":\ufeff"Ann"}'],
    ['empty', ''],
    ['whitespace only', ' \r\n\t '],
    ['an array', '[{"name":"Ann"}]'],
    ['a string', '"Ann"'],
    ['null', 'null'],
    ['a number', '42'],
    ['true', 'true'],
  ];

  it.each(cases)('%s: 400 invalid_request on every JSON route', async (_, body) => {
    const before = await snapshotDatabase(system.sql);
    for (const route of jsonRoutes) {
      const answer = await call(system.url, { method: route.method, path: pathOf(route), token: tokens[route.auth], headers: { 'content-type': 'application/json' }, body });
      expectEnvelope(answer);
      if (answer.status === 400) expect((answer.body as { error: string }).error, route.id).toBe('invalid_request');
    }
    // A route that parses its body first answers exactly invalid_request.
    expectEnvelope(await call(system.url, { method: 'PUT', path: '/v1/users/ann', token: tokens.app, headers: { 'content-type': 'application/json' }, body }), 400, 'invalid_request');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  }, 30_000);

  it('accepts a leading byte-order mark and lets the last of duplicate keys win, as JSON.parse does', async () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"Bom"}')]);
    expectEnvelope(await call(system.url, { method: 'PUT', path: '/v1/users/bom', token: tokens.app, headers: { 'content-type': 'application/json' }, body: bom }), 200);
    expectEnvelope(await call(system.url, { method: 'PUT', path: '/v1/users/dup', token: tokens.app, headers: { 'content-type': 'application/json' }, body: '{"name":"First","name":"Last"}' }), 200);
    const read = await call(system.url, { method: 'GET', path: '/v1/users/dup', token: tokens.app });
    expect((read.body as { name: string }).name).toBe('Last');
  });

  describe('bytes that are not valid UTF-8', () => {
    const invalid: [string, number[]][] = [
      ['a lead byte followed by no continuation (C3 28)', [0xc3, 0x28]],
      ['a lone surrogate encoded in UTF-8 (ED A0 80)', [0xed, 0xa0, 0x80]],
      ['an overlong encoding (C0 AF)', [0xc0, 0xaf]],
      ['bytes that never occur in UTF-8 (FF FE)', [0xff, 0xfe]],
      ['a stray continuation byte (80)', [0x80]],
    ];
    const put = (path: string, body: Buffer) =>
      call(system.url, { method: 'PUT', path, token: tokens.app, headers: { 'content-type': 'application/json' }, body });

    it.each(invalid)('%s in a string: 400 invalid_request on every JSON route, nothing stored', async (_, bytes) => {
      const before = await snapshotDatabase(system.sql);
      const body = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from(bytes), Buffer.from('b"}')]);
      for (const route of jsonRoutes) {
        const answer = await call(system.url, { method: route.method, path: pathOf(route), token: tokens[route.auth], headers: { 'content-type': 'application/json' }, body });
        expectEnvelope(answer);
        if (answer.status === 400) expect((answer.body as { error: string }).error, route.id).toBe('invalid_request');
      }
      const answer = await put('/v1/users/utf8', body);
      expectEnvelope(answer, 400, 'invalid_request');
      expect((answer.body as { message: string }).message).toBe('Request body is not valid UTF-8.');
      expectEnvelope(await call(system.url, { method: 'GET', path: '/v1/users/utf8', token: tokens.app }), 401, 'user_not_found');
      expect(await snapshotDatabase(system.sql)).toEqual(before);
    }, 30_000);

    it('a multi-byte sequence cut short at the end of the body: 400 invalid_request, nothing stored', async () => {
      const answer = await put('/v1/users/utf8-cut', Buffer.concat([Buffer.from('{"name":"Cut"}'), Buffer.from([0xe2, 0x82])]));
      expectEnvelope(answer, 400, 'invalid_request');
      expect((answer.body as { message: string }).message).toBe('Request body is not valid UTF-8.');
      expectEnvelope(await call(system.url, { method: 'GET', path: '/v1/users/utf8-cut', token: tokens.app }), 401, 'user_not_found');
    });

    it('valid UTF-8 (emoji, CJK, accents, no byte-order mark) is stored as sent', async () => {
      const name = 'Zoë 😀 漢字 Ελένη';
      expectEnvelope(await put('/v1/users/utf8-valid', Buffer.from(JSON.stringify({ name }), 'utf8')), 200);
      const read = await call(system.url, { method: 'GET', path: '/v1/users/utf8-valid', token: tokens.app });
      expect((read.body as { name: string }).name).toBe(name);
    });
  });
});

describe('content types', () => {
  const json = '{"name":"Typed"}';
  it.each([
    ['text/plain', json],
    ['application/json; charset=latin1', json],
    ['application/x-www-form-urlencoded', 'name=Typed'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nTyped\r\n--x--\r\n'],
    ['application/xml', '<name>Typed</name>'],
    [undefined, json],
  ])('%s on a JSON route: answered from the body as JSON, else 400 invalid_request', async (type, body) => {
    const headers: Record<string, string> = type ? { 'content-type': type } : {};
    const answer = await call(system.url, { method: 'PUT', path: '/v1/users/typed', token: tokens.app, headers, body });
    if (body === json) expectEnvelope(answer, 200);
    else expectEnvelope(answer, 400, 'invalid_request');
  });

  it('a compressed body (Content-Encoding gzip, deflate, br) is read as the JSON it holds', async () => {
    const json = (name: string) => Buffer.from(JSON.stringify({ name }));
    const encodings: [string, (data: Buffer) => Buffer][] = [['gzip', zlib.gzipSync], ['deflate', zlib.deflateSync], ['br', zlib.brotliCompressSync]];
    for (const [encoding, compress] of encodings) {
      const path = `/v1/users/compressed-${encoding}`;
      expectEnvelope(await call(system.url, { method: 'PUT', path, token: tokens.app, headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body: compress(json(encoding)) }), 200);
      const read = await call(system.url, { method: 'GET', path, token: tokens.app });
      expect((read.body as { name: string }).name).toBe(encoding);
    }
  });

  it('a body that is not the compression it names, or an unknown one: 400 invalid_request; over 10 MB once decompressed: 413', async () => {
    const before = await snapshotDatabase(system.sql);
    const put = (encoding: string, body: Buffer) =>
      call(system.url, { method: 'PUT', path: '/v1/users/compressed', token: tokens.app, headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
    expectEnvelope(await put('gzip', Buffer.from('{"name":"not gzip"}')), 400, 'invalid_request');
    expectEnvelope(await put('compress', Buffer.from('{"name":"lzw"}')), 400, 'invalid_request');
    expectEnvelope(await put('gzip', zlib.gzipSync(Buffer.from(`{"name":"${'x'.repeat(MAX_JSON_BODY_BYTES)}"}`))), 413, 'payload_too_large');
    expect(await snapshotDatabase(system.sql)).toEqual(before);
  });

  it('JSON, a form or nothing on the multipart upload route: 4xx with the envelope', async () => {
    for (const [type, body] of [['application/json', json], ['application/x-www-form-urlencoded', 'a=b'], ['multipart/form-data', ''], ['multipart/form-data; boundary=x', '--x--garbage']] as const) {
      const answer = await call(system.url, { method: 'POST', path: '/v1/files', token: tokens.app, headers: { 'content-type': type }, body });
      expectEnvelope(answer);
      expect(answer.status).toBeGreaterThanOrEqual(400);
    }
  });
});

describe('ids', () => {
  it('an id far longer than any identifier, naming a group in a body, is an unknown group (identity is not asked)', async () => {
    const answer = await call(system.url, {
      method: 'POST',
      path: '/v1/threads',
      token: tokens.app,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ groupID: 'g'.repeat(2_000_000), location: { page: 'p' }, url: 'https://example.com', name: 'Long' }),
    });
    expectEnvelope(answer, 401, 'group_not_found');
  });

  it('a path Express cannot percent-decode, sent straight to a service, is 400 invalid_request', async () => {
    const answer = await call(system.serviceUrls.identity, {
      method: 'GET',
      path: '/v1/users/%E0%A4%A',
      headers: { [INTERNAL_HEADERS.internalToken]: system.env.INTERNAL_TOKEN, [INTERNAL_HEADERS.applicationId]: app.id },
    });
    expectEnvelope(answer, 400, 'invalid_request');
  });
});

describe('headers and methods', () => {
  it('a request head over Node\'s 16 KB limit is refused with 431 in the envelope and the connection closed; the gateway keeps answering', async () => {
    const answer = await call(system.url, { method: 'GET', path: '/v1/users', token: tokens.app, headers: { 'x-padding': 'p'.repeat(20_000) } });
    // Node refuses it before any handler runs; the shared server factory still answers the envelope.
    expectEnvelope(answer, 431, 'headers_too_large');
    expect(answer.closed || answer.headers.connection === 'close').toBe(true);
    const longUrl = await call(system.url, { method: 'GET', path: `/v1/users?filter=${'q'.repeat(20_000)}`, token: tokens.app });
    expectEnvelope(longUrl, 431, 'headers_too_large');
    await expectAllAlive();
  });

  it('a huge but admissible Authorization header is an invalid token in the envelope', async () => {
    const answer = await call(system.url, { method: 'GET', path: '/v1/users', headers: { authorization: `Bearer ${'a'.repeat(15_000)}` } });
    expectEnvelope(answer, 401);
  });

  it.each(['PATCH', 'TRACE', 'PROPFIND', 'PURGE', 'MKCOL'])('%s on a known path: 405 method_not_allowed with Allow; on an unknown one: 404', async (method) => {
    const known = await call(system.url, { method, path: '/v1/users/someone', token: tokens.app, headers: { 'content-type': 'application/json' }, body: '{}' });
    expectEnvelope(known, 405, 'method_not_allowed');
    expect(known.headers.allow).toBe('PUT, GET, DELETE');
    expectEnvelope(await call(system.url, { method, path: '/v1/nowhere', token: tokens.app }), 404, 'not_found');
  });
});
