/**
 * Files for real: multipart uploads stored in Postgres, signed
 * download links through the gateway, and the attachment rules of messages.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import http, { type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '@collab/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConversationConfig } from '../../services/conversation/src/config.js';
import { DOWNLOAD_LINK_TTL_SECONDS, signedFileUrl } from '../../services/conversation/src/domain/files/file-links.js';
import { createConversationService } from '../../services/conversation/src/service.js';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { createApplication, request, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;
let otherApp: TestApplication;

const THREAD = 'files-thread';
const content = (text: string) => [{ type: 'p', children: [{ text }] }];

systemWithApplication('files app', async (started) => {
  ({ system, app } = started);
  otherApp = await createApplication(system, 'other files app');
  for (const application of [app, otherApp]) {
    await application.client.put('/v1/users/ann', { name: 'Ann' });
    await application.client.put('/v1/users/bob', { name: 'Bob' });
    await application.client.put('/v1/groups/team', { name: 'Team', members: ['ann', 'bob'] });
  }
  const first = await app.client.post(`/v1/threads/${THREAD}/messages`, {
    authorID: 'ann',
    content: content('the thread'),
    createThread: { groupID: 'team', location: { page: 'files' }, url: 'https://example.com/files', name: 'Files' },
  });
  if (first.status !== 200) throw new Error(`thread setup failed: ${JSON.stringify(first.body)}`);
});

interface UploadInput {
  ownerID?: string;
  name?: string;
  file?: { data: Uint8Array; filename: string; type?: string };
}

/** POST /v1/files as multipart form data, the way a browser or fetch sends it. */
async function upload(input: UploadInput, options: { baseUrl?: string; application?: TestApplication; token?: string | null } = {}) {
  const application = options.application ?? app;
  const form = new FormData();
  if (input.ownerID !== undefined) form.set('ownerID', input.ownerID);
  if (input.name !== undefined) form.set('name', input.name);
  if (input.file) form.set('file', new Blob([input.file.data], input.file.type ? { type: input.file.type } : {}), input.file.filename);
  const token = options.token === undefined ? await serverToken(application.id, application.secret) : options.token;
  const response = await fetch(`${options.baseUrl ?? system.url}/v1/files`, {
    method: 'POST',
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: form,
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

async function uploadOk(input: UploadInput, application = app): Promise<string> {
  const response = await upload(input, { application });
  if (response.status !== 200) throw new Error(`upload failed: ${JSON.stringify(response.body)}`);
  return response.body.fileID as string;
}

const textFile = (text: string, filename = 'note.txt') => ({ data: Buffer.from(text), filename, type: 'text/plain' });

async function counts(): Promise<{ files: number; chunks: number }> {
  const { rows } = await system.sql.query(
    `SELECT (SELECT count(*) FROM conversation.files)::int AS files, (SELECT count(*) FROM conversation.file_chunks)::int AS chunks`,
  );
  return rows[0];
}

const messagePath = (messageId: string) => `/v1/threads/${THREAD}/messages/${encodeURIComponent(messageId)}`;

async function getMessage(messageId: string) {
  const response = await app.client.get(messagePath(messageId));
  expect(response.status).toBe(200);
  return response.body;
}

/** A new message by `authorID` with nothing attached; returns its id. */
async function newMessage(authorID = 'ann'): Promise<string> {
  const created = await app.client.post(`/v1/threads/${THREAD}/messages`, { authorID, content: content('a message') });
  expect(created.status).toBe(200);
  return created.body.messageID;
}

/** A new message by `authorID` with the file attached, and the attachment object it shows. */
async function messageWithFile(fileId: string, authorID = 'ann') {
  const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
    authorID,
    content: content('with a file'),
    addAttachments: [{ type: 'file', id: fileId }],
  });
  expect(created.status).toBe(200);
  const message = await getMessage(created.body.messageID);
  expect(message.attachments).toHaveLength(1);
  return { messageId: created.body.messageID as string, attachment: message.attachments[0] };
}

const attachmentOf = async (fileId: string, authorID = 'ann') => (await messageWithFile(fileId, authorID)).attachment;

async function download(url: string) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

function expectErrorEnvelope(response: { status: number; body: any }, status: number, error: string) {
  expect(response.status).toBe(status);
  expect(response.body).toEqual({ error, message: expect.any(String) });
}

describe('POST /v1/files', () => {
  it('answers success with a new UUID and stores the file for the application and owner', async () => {
    const before = await counts();
    const response = await upload({ ownerID: 'ann', file: textFile('hello', 'hello.txt') });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, message: 'File uploaded.', fileID: expect.any(String) });
    expect(response.body.fileID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const { rows } = await system.sql.query(
      `SELECT application_id, owner_id, name, mime_type, size::int AS size FROM conversation.files WHERE id = $1`,
      [response.body.fileID],
    );
    expect(rows).toEqual([{ application_id: app.id, owner_id: 'ann', name: 'hello.txt', mime_type: 'text/plain', size: 5 }]);
    expect((await counts()).files).toBe(before.files + 1);
  });

  it('gives every upload its own id', async () => {
    const first = await uploadOk({ ownerID: 'ann', file: textFile('same') });
    const second = await uploadOk({ ownerID: 'ann', file: textFile('same') });
    expect(first).not.toBe(second);
  });

  it('returns a binary file with all 256 byte values exactly as uploaded', async () => {
    const data = Buffer.alloc(256 * 4);
    for (let i = 0; i < data.length; i++) data[i] = i % 256;
    const fileId = await uploadOk({ ownerID: 'ann', file: { data, filename: 'bytes.bin', type: 'application/octet-stream' } });
    const attachment = await attachmentOf(fileId);
    expect(attachment.size).toBe(data.length);
    const downloaded = await download(attachment.url);
    expect(downloaded.status).toBe(200);
    expect(downloaded.bytes.equals(data)).toBe(true);
  });

  it('stores a 3 MiB file in several 1 MiB chunks and returns it byte for byte', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 12345);
    const fileId = await uploadOk({ ownerID: 'ann', file: { data, filename: 'big.bin', type: 'application/octet-stream' } });
    const { rows } = await system.sql.query(
      `SELECT count(*)::int AS chunks, max(length(data))::int AS largest, sum(length(data))::int AS total
       FROM conversation.file_chunks WHERE file_id = $1`,
      [fileId],
    );
    expect(rows[0].chunks).toBeGreaterThanOrEqual(3);
    expect(rows[0].total).toBe(data.length);
    expect(rows[0].largest).toBeLessThan(2 * 1024 * 1024);
    const attachment = await attachmentOf(fileId);
    expect(attachment.size).toBe(data.length);
    const downloaded = await download(attachment.url);
    expect(downloaded.headers.get('content-length')).toBe(String(data.length));
    expect(downloaded.bytes.equals(data)).toBe(true);
  });

  it('accepts files above the 10 MB limit of JSON bodies', async () => {
    const data = randomBytes(11 * 1024 * 1024);
    const response = await upload({ ownerID: 'ann', file: { data, filename: 'eleven.bin', type: 'application/octet-stream' } });
    expect(response.status).toBe(200);
    const downloaded = await download((await attachmentOf(response.body.fileID)).url);
    expect(downloaded.bytes.equals(data)).toBe(true);
  });

  it('keeps an empty file', async () => {
    const fileId = await uploadOk({ ownerID: 'ann', file: { data: new Uint8Array(0), filename: 'empty.txt', type: 'text/plain' } });
    const attachment = await attachmentOf(fileId);
    expect(attachment.size).toBe(0);
    const downloaded = await download(attachment.url);
    expect(downloaded.status).toBe(200);
    expect(downloaded.headers.get('content-length')).toBe('0');
    expect(downloaded.bytes.length).toBe(0);
  });

  it('keeps the content type of the file part', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2]);
    const fileId = await uploadOk({ ownerID: 'ann', file: { data: png, filename: 'pixel.png', type: 'image/png' } });
    const attachment = await attachmentOf(fileId);
    expect(attachment.mimeType).toBe('image/png');
    expect((await download(attachment.url)).headers.get('content-type')).toBe('image/png');
  });

  it('labels a file sent without a type application/octet-stream', async () => {
    const fileId = await uploadOk({ ownerID: 'ann', file: { data: Buffer.from([1, 2, 3]), filename: 'untyped' } });
    const attachment = await attachmentOf(fileId);
    expect(attachment.mimeType).toBe('application/octet-stream');
    expect((await download(attachment.url)).headers.get('content-type')).toBe('application/octet-stream');
  });

  it('names the file after the `name` field when one is given, else after the filename', async () => {
    const named = await uploadOk({ ownerID: 'ann', name: 'Quarterly report.txt', file: textFile('q', 'upload-123.tmp') });
    expect((await attachmentOf(named)).name).toBe('Quarterly report.txt');
    const unnamed = await uploadOk({ ownerID: 'ann', file: textFile('q', 'upload-123.tmp') });
    expect((await attachmentOf(unnamed)).name).toBe('upload-123.tmp');
  });

  it('keeps a filename with non-ASCII characters', async () => {
    const fileId = await uploadOk({ ownerID: 'ann', file: textFile('résumé', 'Résumé – 日本語 ✓.txt') });
    expect((await attachmentOf(fileId)).name).toBe('Résumé – 日本語 ✓.txt');
  });

  it('refuses an upload without a file → 400 missing_field, nothing stored', async () => {
    const before = await counts();
    const response = await upload({ ownerID: 'ann' });
    expectErrorEnvelope(response, 400, 'missing_field');
    expect(response.body.message).toContain('file');
    expect(await counts()).toEqual(before);
  });

  it('refuses an upload without ownerID → 400 missing_field, nothing stored', async () => {
    const before = await counts();
    const response = await upload({ file: textFile('orphan') });
    expectErrorEnvelope(response, 400, 'missing_field');
    expect(response.body.message).toContain('ownerID');
    expect(await counts()).toEqual(before);
  });

  it('refuses an unknown owner → 401 user_not_found, nothing stored', async () => {
    const before = await counts();
    const response = await upload({ ownerID: 'nobody', file: textFile('whose?') });
    expectErrorEnvelope(response, 401, 'user_not_found');
    expect(await counts()).toEqual(before);
  });

  it('refuses an owner who exists only in another application → 401 user_not_found', async () => {
    await otherApp.client.put('/v1/users/only-elsewhere', { name: 'Elsewhere' });
    const response = await upload({ ownerID: 'only-elsewhere', file: textFile('x') });
    expectErrorEnvelope(response, 401, 'user_not_found');
  });

  it('refuses a JSON body → 400 invalid_request', async () => {
    const before = await counts();
    const response = await app.client.post('/v1/files', { ownerID: 'ann', file: 'aGVsbG8=' });
    expectErrorEnvelope(response, 400, 'invalid_request');
    expect(await counts()).toEqual(before);
  });

  it('refuses a multipart content type without a boundary → 400 invalid_request', async () => {
    const response = await request(system.url, 'POST', '/v1/files', {
      token: await serverToken(app.id, app.secret),
      headers: { 'content-type': 'multipart/form-data' },
      rawBody: 'ownerID=ann',
    });
    expectErrorEnvelope(response, 400, 'invalid_request');
  });

  it('refuses an upload without a token → 401', async () => {
    const before = await counts();
    const response = await upload({ ownerID: 'ann', file: textFile('anonymous') }, { token: null });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ error: 'missing_authorization_header', message: expect.any(String) });
    expect(await counts()).toEqual(before);
  });
});

describe('the size limit (MAX_FILE_BYTES) and interrupted uploads', () => {
  const LIMIT = 64 * 1024;
  let small: { url: string; stop(): Promise<void> };

  async function listen(handler: RequestListener): Promise<{ server: Server; url: string }> {
    return new Promise((resolve) => {
      const server = http.createServer(handler).listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
    });
  }
  const close = (server: Server) =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });

  beforeAll(async () => {
    // A second conversation service on the same database and identity, with a small limit and a
    // small pool, behind its own gateway.
    const logger = createLogger('test', 'silent');
    const conversation = await createConversationService(
      loadConversationConfig({ ...system.env, MAX_FILE_BYTES: String(LIMIT), DB_POOL_SIZE: '2' }),
      logger,
    );
    const conversationServer = await listen(conversation.app);
    const gateway = await createGateway(loadGatewayConfig({ ...system.env, CONVERSATION_URL: conversationServer.url }), logger, () => false);
    const gatewayServer = await listen(gateway.app);
    small = {
      url: gatewayServer.url,
      async stop() {
        await close(gatewayServer.server);
        await close(conversationServer.server);
        await gateway.close();
        await conversation.close();
      },
    };
  });
  afterAll(() => small?.stop());

  it('accepts a file of exactly MAX_FILE_BYTES', async () => {
    const data = randomBytes(LIMIT);
    const response = await upload({ ownerID: 'ann', file: { data, filename: 'exact.bin' } }, { baseUrl: small.url });
    expect(response.status).toBe(200);
    const { rows } = await system.sql.query(`SELECT size::int AS size FROM conversation.files WHERE id = $1`, [response.body.fileID]);
    expect(rows).toEqual([{ size: LIMIT }]);
  });

  it('refuses a file over MAX_FILE_BYTES → 413 payload_too_large, nothing stored', async () => {
    const before = await counts();
    const response = await upload({ ownerID: 'ann', file: { data: randomBytes(LIMIT + 1), filename: 'over.bin' } }, { baseUrl: small.url });
    expectErrorEnvelope(response, 413, 'payload_too_large');
    expect(await counts()).toEqual(before);
  });

  it('an upload interrupted by the client stores nothing and releases its database connection', async () => {
    const before = await counts();
    const openUploads = async () => {
      const { rows } = await system.sql.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND query LIKE '%conversation.files%'`,
      );
      return rows[0].n as number;
    };
    expect(await openUploads()).toBe(0);

    const boundary = `----boundary${randomBytes(8).toString('hex')}`;
    const token = await serverToken(app.id, app.secret);
    const interrupted = http.request(`${small.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
    interrupted.on('error', () => {});
    interrupted.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="ownerID"\r\n\r\nann\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n` +
        `Content-Type: application/octet-stream\r\n\r\n`,
    );
    interrupted.write(randomBytes(LIMIT / 2));
    // The service has begun storing the upload…
    await vi.waitFor(async () => expect(await openUploads()).toBe(1), { timeout: 10_000, interval: 20 });
    // …when the client goes away.
    interrupted.destroy();
    await vi.waitFor(async () => expect(await openUploads()).toBe(0), { timeout: 10_000, interval: 20 });
    expect(await counts()).toEqual(before);

    // The service still has its connections: more uploads than its pool size succeed.
    for (let i = 0; i < 3; i++) {
      const response = await upload({ ownerID: 'ann', file: textFile(`after ${i}`) }, { baseUrl: small.url });
      expect(response.status).toBe(200);
    }
  });
});

describe('downloads: GET /v1/files/<id> through a signed link', () => {
  let fileId: string;
  let url: URL;
  const data = Buffer.from('download me\n');

  beforeAll(async () => {
    fileId = await uploadOk({ ownerID: 'ann', name: 'download me.txt', file: textFile(data.toString(), 'ignored.txt') });
    url = new URL((await attachmentOf(fileId)).url);
  });

  it("points the attachment's url at the gateway and downloads without a token", async () => {
    expect(`${url.origin}${url.pathname}`).toBe(`${system.url}/v1/files/${fileId}`);
    expect([...url.searchParams.keys()].sort()).toEqual(['expires', 'signature']);
    const downloaded = await download(url.toString());
    expect(downloaded.status).toBe(200);
    expect(downloaded.bytes.equals(data)).toBe(true);
  });

  it('signs links for one hour from when the message is read', async () => {
    const before = Math.floor(Date.now() / 1000);
    const message = await app.client.get(`/v1/threads/${THREAD}/messages`);
    const after = Math.floor(Date.now() / 1000);
    const attachment = message.body.flatMap((m: any) => m.attachments).find((a: any) => a.id === `cord:${fileId}`);
    const expires = Number(new URL(attachment.url).searchParams.get('expires'));
    expect(DOWNLOAD_LINK_TTL_SECONDS).toBe(3600);
    expect(expires).toBeGreaterThanOrEqual(before + 3600);
    expect(expires).toBeLessThanOrEqual(after + 3600);
  });

  it('answers with Content-Type, Content-Length and Content-Disposition', async () => {
    const downloaded = await download(url.toString());
    expect(downloaded.headers.get('content-type')).toBe('text/plain');
    expect(downloaded.headers.get('content-length')).toBe(String(data.length));
    expect(downloaded.headers.get('content-disposition')).toBe(`attachment; filename*=UTF-8''download%20me.txt`);
  });

  it('encodes any file name as a valid RFC 8187 filename* parameter', async () => {
    const name = "Q3 (final) 'v2'* — résumé.txt";
    const id = await uploadOk({ ownerID: 'ann', name, file: textFile('q3') });
    const downloaded = await download((await attachmentOf(id)).url);
    const disposition = downloaded.headers.get('content-disposition') ?? '';
    const match = /^attachment; filename\*=UTF-8''([^;\s]*)$/.exec(disposition);
    expect(match).not.toBeNull();
    // attr-char of RFC 8187 §3.2.1, plus percent-encoded octets.
    expect(match![1]).toMatch(/^(?:[A-Za-z0-9!#$&+\-.^_`|~]|%[0-9A-F]{2})*$/);
    expect(decodeURIComponent(match![1])).toBe(name);
  });

  it('refuses a tampered signature → 404 not_found', async () => {
    const tampered = new URL(url);
    const signature = tampered.searchParams.get('signature')!;
    tampered.searchParams.set('signature', `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`);
    const response = await request(tampered.origin, 'GET', `${tampered.pathname}${tampered.search}`);
    expectErrorEnvelope(response, 404, 'not_found');
  });

  it('refuses a tampered expiry → 404 not_found', async () => {
    const tampered = new URL(url);
    tampered.searchParams.set('expires', String(Number(tampered.searchParams.get('expires')) + 3600));
    const response = await request(tampered.origin, 'GET', `${tampered.pathname}${tampered.search}`);
    expectErrorEnvelope(response, 404, 'not_found');
  });

  it('refuses a link without signature or expiry → 404 not_found', async () => {
    expectErrorEnvelope(await request(system.url, 'GET', `/v1/files/${fileId}`), 404, 'not_found');
    const unsigned = new URL(url);
    unsigned.searchParams.delete('signature');
    expectErrorEnvelope(await request(system.url, 'GET', `${unsigned.pathname}${unsigned.search}`), 404, 'not_found');
  });

  it('refuses an expired link → 404 not_found', async () => {
    const secret = system.env.FILE_URL_SECRET;
    // A link signed the same way an hour and a minute ago has expired…
    const expired = new URL(signedFileUrl(system.url, secret, fileId, Date.now() - (DOWNLOAD_LINK_TTL_SECONDS + 60) * 1000));
    expectErrorEnvelope(await request(system.url, 'GET', `${expired.pathname}${expired.search}`), 404, 'not_found');
    // …while one signed now works.
    expect((await download(signedFileUrl(system.url, secret, fileId))).status).toBe(200);
  });

  it("refuses another file's signature → 404 not_found", async () => {
    const otherId = await uploadOk({ ownerID: 'ann', file: textFile('other') });
    const borrowed = new URL(url);
    borrowed.pathname = `/v1/files/${otherId}`;
    expectErrorEnvelope(await request(system.url, 'GET', `${borrowed.pathname}${borrowed.search}`), 404, 'not_found');
  });

  it('refuses a link for a file that does not exist → 404 not_found', async () => {
    const missing = new URL(signedFileUrl(system.url, system.env.FILE_URL_SECRET, randomUUID()));
    expectErrorEnvelope(await request(system.url, 'GET', `${missing.pathname}${missing.search}`), 404, 'not_found');
  });
});

describe('attachments', () => {
  it('attaches files when a message is created, in the order given', async () => {
    const first = await uploadOk({ ownerID: 'ann', file: textFile('one', 'one.txt') });
    const second = await uploadOk({ ownerID: 'ann', file: { data: Buffer.from([0, 1]), filename: 'two.bin', type: 'application/x-two' } });
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: content('two files'),
      addAttachments: [
        { type: 'file', id: second },
        { type: 'file', id: first },
      ],
    });
    expect(created.status).toBe(200);
    const message = await getMessage(created.body.messageID);
    const link = (id: string) => expect.stringMatching(new RegExp(`^${system.url}/v1/files/${id}\\?expires=\\d+&signature=[\\w-]+$`));
    expect(message.attachments).toEqual([
      { type: 'file', id: `cord:${second}`, name: 'two.bin', url: link(second), mimeType: 'application/x-two', size: 2, uploadStatus: 'uploaded' },
      { type: 'file', id: `cord:${first}`, name: 'one.txt', url: link(first), mimeType: 'text/plain', size: 3, uploadStatus: 'uploaded' },
    ]);
  });

  it('attaches files to an existing message on update, after those already attached', async () => {
    const first = await uploadOk({ ownerID: 'ann', file: textFile('first') });
    const second = await uploadOk({ ownerID: 'ann', file: textFile('second') });
    const messageId = await newMessage();
    expect((await getMessage(messageId)).attachments).toEqual([]);
    expect((await app.client.put(messagePath(messageId), { addAttachments: [{ type: 'file', id: first }] })).status).toBe(200);
    const updated = await app.client.put(messagePath(messageId), { addAttachments: [{ type: 'file', id: `cord:${second}` }] });
    expect(updated.body).toEqual({ success: true, message: `You successfully updated message ${messageId}` });
    expect((await getMessage(messageId)).attachments.map((a: any) => a.id)).toEqual([`cord:${first}`, `cord:${second}`]);
  });

  it('shows attachments in GET /v1/threads/<ID>/messages and GET /v1/messages too', async () => {
    const fileId = await uploadOk({ ownerID: 'ann', file: textFile('listed') });
    const attachment = await attachmentOf(fileId);
    const inThread = await app.client.get(`/v1/threads/${THREAD}/messages`);
    expect(inThread.body.flatMap((m: any) => m.attachments.map((a: any) => a.id))).toContain(attachment.id);
    const all = await app.client.get('/v1/messages');
    expect(all.body.messages.flatMap((m: any) => m.attachments.map((a: any) => a.id))).toContain(attachment.id);
  });

  it('refuses the same file twice in one addAttachments → 400 invalid_field, nothing created', async () => {
    const fileId = await uploadOk({ ownerID: 'ann', file: textFile('twice') });
    const id = `twice-${randomUUID()}`;
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      id,
      authorID: 'ann',
      content: content('twice'),
      addAttachments: [
        { type: 'file', id: fileId },
        { type: 'file', id: `cord:${fileId}` },
      ],
    });
    expectErrorEnvelope(created, 400, 'invalid_field');
    expect(created.body.message).toBe('Cannot attach the same file multiple times');
    expect((await app.client.get(messagePath(id))).status).toBe(404);
    // UUIDs are case-insensitive: the upper-case form names the same file.
    const upperCase = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: content('twice'),
      addAttachments: [
        { type: 'file', id: fileId },
        { type: 'file', id: `cord:${fileId.toUpperCase()}` },
      ],
    });
    expectErrorEnvelope(upperCase, 400, 'invalid_field');

    const messageId = await newMessage();
    const updated = await app.client.put(messagePath(messageId), {
      addAttachments: [
        { type: 'file', id: fileId },
        { type: 'file', id: fileId },
      ],
    });
    expectErrorEnvelope(updated, 400, 'invalid_field');
    expect((await getMessage(messageId)).attachments).toEqual([]);
  });

  it('refuses an unknown file → 404 file_not_found', async () => {
    // Including ids that look like UUIDs (36 hex digits and dashes) but are not valid ones.
    for (const id of [randomUUID(), `cord:${randomUUID()}`, 'not-a-file-id', '-'.repeat(36), `cord:${'0'.repeat(35)}-`]) {
      const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
        authorID: 'ann',
        content: content('ghost'),
        addAttachments: [{ type: 'file', id }],
      });
      expectErrorEnvelope(created, 404, 'file_not_found');
    }
    const messageId = await newMessage();
    const updated = await app.client.put(messagePath(messageId), { addAttachments: [{ type: 'file', id: randomUUID() }] });
    expectErrorEnvelope(updated, 404, 'file_not_found');
  });

  it("refuses a file owned by a user other than the message's author → 403 file_belongs_to_different_user", async () => {
    const bobsFile = await uploadOk({ ownerID: 'bob', file: textFile("bob's") });
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: content('not mine'),
      addAttachments: [{ type: 'file', id: bobsFile }],
    });
    expectErrorEnvelope(created, 403, 'file_belongs_to_different_user');

    const annsMessage = await newMessage('ann');
    const updated = await app.client.put(messagePath(annsMessage), { addAttachments: [{ type: 'file', id: bobsFile }] });
    expectErrorEnvelope(updated, 403, 'file_belongs_to_different_user');
    expect((await getMessage(annsMessage)).attachments).toEqual([]);

    // Bob may attach it to his own message.
    expect((await attachmentOf(bobsFile, 'bob')).id).toBe(`cord:${bobsFile}`);
  });

  it('refuses attaching a file that is already attached to the message → 400 invalid_field', async () => {
    const fileId = await uploadOk({ ownerID: 'ann', file: textFile('again') });
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: content('again'),
      addAttachments: [{ type: 'file', id: fileId }],
    });
    const messageId = created.body.messageID;
    for (const id of [fileId, `cord:${fileId}`]) {
      const updated = await app.client.put(messagePath(messageId), { addAttachments: [{ type: 'file', id }] });
      expectErrorEnvelope(updated, 400, 'invalid_field');
      expect(updated.body.message).toBe('Cannot attach an already-attached file');
    }
    expect((await getMessage(messageId)).attachments.map((a: any) => a.id)).toEqual([`cord:${fileId}`]);
  });

  it('refuses adding and removing the same file in one request → 400 invalid_field, nothing changed', async () => {
    const attached = await uploadOk({ ownerID: 'ann', file: textFile('attached') });
    const fresh = await uploadOk({ ownerID: 'ann', file: textFile('fresh') });
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: content('add and remove'),
      addAttachments: [{ type: 'file', id: attached }],
    });
    const messageId = created.body.messageID;
    const updated = await app.client.put(messagePath(messageId), {
      addAttachments: [{ type: 'file', id: fresh }],
      removeAttachments: [
        { type: 'file', id: `cord:${fresh}` },
        { type: 'file', id: attached },
      ],
    });
    expectErrorEnvelope(updated, 400, 'invalid_field');
    expect(updated.body.message).toBe('Adding and removing the same attachment is invalid.');
    expect((await getMessage(messageId)).attachments.map((a: any) => a.id)).toEqual([`cord:${attached}`]);
  });

  it('removes an attachment by its cord:<uuid> id and by the bare uuid', async () => {
    const first = await uploadOk({ ownerID: 'ann', file: textFile('first') });
    const second = await uploadOk({ ownerID: 'ann', file: textFile('second') });
    const third = await uploadOk({ ownerID: 'ann', file: textFile('third') });
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: content('three files'),
      addAttachments: [first, second, third].map((id) => ({ type: 'file', id })),
    });
    const messageId = created.body.messageID;
    const byPrefixed = await app.client.put(messagePath(messageId), { removeAttachments: [{ type: 'file', id: `cord:${first}` }] });
    expect(byPrefixed.status).toBe(200);
    expect((await getMessage(messageId)).attachments.map((a: any) => a.id)).toEqual([`cord:${second}`, `cord:${third}`]);
    const byBare = await app.client.put(messagePath(messageId), { removeAttachments: [{ type: 'file', id: third }] });
    expect(byBare.status).toBe(200);
    expect((await getMessage(messageId)).attachments.map((a: any) => a.id)).toEqual([`cord:${second}`]);
  });

  it('a removed file can be attached again', async () => {
    const fileId = await uploadOk({ ownerID: 'ann', file: textFile('back') });
    const { messageId, attachment } = await messageWithFile(fileId);
    await app.client.put(messagePath(messageId), { removeAttachments: [{ type: 'file', id: attachment.id }] });
    expect((await getMessage(messageId)).attachments).toEqual([]);
    expect((await app.client.put(messagePath(messageId), { addAttachments: [{ type: 'file', id: attachment.id }] })).status).toBe(200);
    expect((await getMessage(messageId)).attachments.map((a: any) => a.id)).toEqual([attachment.id]);
  });

  it('removing a file that is not attached changes nothing and is no error', async () => {
    const attached = await uploadOk({ ownerID: 'ann', file: textFile('kept') });
    const elsewhere = await uploadOk({ ownerID: 'ann', file: textFile('elsewhere') });
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: content('kept'),
      addAttachments: [{ type: 'file', id: attached }],
    });
    const messageId = created.body.messageID;
    for (const id of [elsewhere, `cord:${randomUUID()}`, 'not-a-uuid']) {
      const updated = await app.client.put(messagePath(messageId), { removeAttachments: [{ type: 'file', id }] });
      expect(updated.status).toBe(200);
    }
    expect((await getMessage(messageId)).attachments.map((a: any) => a.id)).toEqual([`cord:${attached}`]);
  });

  it('removing a link preview that does not exist changes nothing and is no error', async () => {
    const fileId = await uploadOk({ ownerID: 'ann', file: textFile('with preview removal') });
    const { messageId, attachment } = await messageWithFile(fileId);
    for (const id of ['no-such-preview', randomUUID(), '12345']) {
      const updated = await app.client.put(messagePath(messageId), { removeAttachments: [{ type: 'link_preview', id }] });
      expect(updated.status).toBe(200);
    }
    expect((await getMessage(messageId)).attachments.map((a: any) => a.id)).toEqual([attachment.id]);
  });

  it("refuses another application's file → 404 file_not_found", async () => {
    const foreign = await uploadOk({ ownerID: 'ann', file: textFile('foreign') }, otherApp);
    const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
      authorID: 'ann',
      content: content('foreign'),
      addAttachments: [{ type: 'file', id: foreign }],
    });
    expectErrorEnvelope(created, 404, 'file_not_found');
    const messageId = await newMessage();
    const updated = await app.client.put(messagePath(messageId), { addAttachments: [{ type: 'file', id: `cord:${foreign}` }] });
    expectErrorEnvelope(updated, 404, 'file_not_found');
    expect((await getMessage(messageId)).attachments).toEqual([]);
  });
});

describe('download links with PUBLIC_URL', () => {
  it('builds working links from a PUBLIC_URL given with a trailing slash', async () => {
    const logger = createLogger('test', 'silent');
    const conversation = await createConversationService(loadConversationConfig({ ...system.env, PUBLIC_URL: `${system.url}/` }), logger);
    const server = await new Promise<Server>((resolve) => {
      const listening = http.createServer(conversation.app).listen(0, '127.0.0.1', () => resolve(listening));
    });
    try {
      const fileId = await uploadOk({ ownerID: 'ann', file: textFile('public') });
      const created = await app.client.post(`/v1/threads/${THREAD}/messages`, {
        authorID: 'ann',
        content: content('public url'),
        addAttachments: [{ type: 'file', id: fileId }],
      });
      // Read through the service configured with PUBLIC_URL, as the gateway would.
      const read = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, 'GET', messagePath(created.body.messageID), {
        headers: { 'x-collab-internal-token': system.env.INTERNAL_TOKEN, 'x-collab-application-id': app.id },
      });
      expect(read.status).toBe(200);
      const url: string = read.body.attachments[0].url;
      expect(url.startsWith(`${system.url}/v1/files/${fileId}?`)).toBe(true);
      const downloaded = await download(url);
      expect(downloaded.status).toBe(200);
      expect(downloaded.bytes.toString()).toBe('public');
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await conversation.close();
    }
  });
});
