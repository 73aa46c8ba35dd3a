/**
 * Contract tests across services: every internal HTTP call and every job payload is checked on
 * both sides against the one shared schema (@collab/shared contracts and QUEUES), so that
 * changing a producer or a consumer without the other fails here.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ApiError,
  cascadeContract,
  createInternalClient,
  createLogger,
  createProducer,
  createRedis,
  identityDirectory,
  identityInternal,
  identityLookup,
  queuePrefix,
  QUEUES,
  startWorker,
  type JobHandlers,
  type QueueName,
} from '@collab/shared';
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { CredentialStore } from '@collab/shared';
import { dependentServicesCascade } from '../../services/identity/src/domain/events/relay.js';
import { request, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';

let system: TestSystem;
let app: TestApplication;

systemWithApplication('test app', (started) => ({ system, app } = started));

function internalHeaders(applicationId?: string): Record<string, string> {
  const headers: Record<string, string> = { 'x-collab-internal-token': system.env.INTERNAL_TOKEN };
  if (applicationId) headers['x-collab-application-id'] = applicationId;
  return headers;
}

/** A stand-in for a service: records each request and answers what `answer` says. */
interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}
interface FakeService {
  url: string;
  calls: Recorded[];
  answer: (call: Recorded) => { status: number; body: unknown };
  close(): Promise<void>;
}

async function fakeService(): Promise<FakeService> {
  const fake: FakeService = {
    url: '',
    calls: [],
    answer: () => ({ status: 500, body: { error: 'internal_error', message: 'no answer set' } }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const call: Recorded = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      };
      fake.calls.push(call);
      const { status, body } = fake.answer(call);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

async function withFake(run: (fake: FakeService) => Promise<void>): Promise<void> {
  const fake = await fakeService();
  try {
    await run(fake);
  } finally {
    await fake.close();
  }
}

const clientFor = (fake: FakeService) => createInternalClient({ baseUrl: fake.url, internalToken: 'contract-token', service: 'identity' });

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, got an answer');
}

describe('identity internal API (consumer): answers parse with the shared response schemas', () => {
  it('application credentials', async () => {
    const contract = identityInternal.applicationCredentials;
    const response = await request(system.serviceUrls.identity, contract.method, contract.path(app.id), { headers: internalHeaders() });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const parsed = contract.response.parse(response.body);
    expect(parsed).toMatchObject({ id: app.id, customerId: system.customer.id, secret: app.secret });
  });

  it('customer credentials', async () => {
    const contract = identityInternal.customerCredentials;
    const response = await request(system.serviceUrls.identity, contract.method, contract.path(system.customer.id), { headers: internalHeaders() });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(contract.response.parse(response.body)).toEqual({ id: system.customer.id, secret: system.customer.secret });
  });

  it('session', async () => {
    const authorized = await request(system.url, 'POST', '/v1/authorize', { body: { signed_app_token: await serverToken(app.id, app.secret) } });
    expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
    const { rows } = await system.sql.query<{ id: string }>('SELECT id FROM identity.sessions WHERE application_id = $1', [app.id]);
    expect(rows.length).toBeGreaterThan(0);
    const contract = identityInternal.session;
    const response = await request(system.serviceUrls.identity, contract.method, contract.path(rows[0].id), { headers: internalHeaders() });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(contract.response.parse(response.body)).toMatchObject({ id: rows[0].id, applicationId: app.id });
  });

  it('lookup: a request built with the request schema is answered per the response schema', async () => {
    expect((await app.client.put('/v1/users/ann', { name: 'Ann' })).status).toBe(200);
    expect((await app.client.put('/v1/groups/lookup-group', { name: 'G', members: ['ann'] })).status).toBe(200);
    const body = identityLookup.request.parse({ userIds: ['ann', 'nobody'], groupId: 'lookup-group' });
    const response = await request(system.serviceUrls.identity, identityLookup.method, identityLookup.path, { headers: internalHeaders(app.id), body });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const parsed = identityLookup.response.parse(response.body);
    expect(parsed.users.map((user) => user.id)).toEqual(['ann']);
    expect(parsed.group).toEqual({ id: 'lookup-group', status: 'active', memberIds: ['ann'] });
  });

  it('lookup: answers each user whole, only the asked members, and null for a group not asked for or unknown', async () => {
    const picture = 'https://example.com/bea.png';
    expect((await app.client.put('/v1/users/bea', { name: 'Bea', shortName: 'B', profilePictureURL: picture, metadata: { n: 1, ok: true } })).status).toBe(200);
    expect((await app.client.put('/v1/users/cid', { name: 'Cid' })).status).toBe(200);
    expect((await app.client.put('/v1/groups/lookup-two', { name: 'G2', members: ['bea', 'cid'] })).status).toBe(200);
    const lookup = async (body: unknown) => {
      const response = await request(system.serviceUrls.identity, identityLookup.method, identityLookup.path, { headers: internalHeaders(app.id), body });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return identityLookup.response.parse(response.body);
    };
    const bea = { id: 'bea', name: 'Bea', shortName: 'B', status: 'active', profilePictureURL: picture, metadata: { n: 1, ok: true } };
    expect(await lookup({ userIds: ['bea', 'bea', 'nobody'], groupId: 'lookup-two' })).toEqual({
      users: [bea],
      group: { id: 'lookup-two', status: 'active', memberIds: ['bea'] },
    });
    expect(await lookup({ userIds: ['bea'] })).toEqual({ users: [bea], group: null });
    expect(await lookup({ userIds: [], groupId: 'no-such-group' })).toEqual({ users: [], group: null });
    expect(await lookup({ userIds: [], groupId: 'lookup-two' })).toEqual({ users: [], group: { id: 'lookup-two', status: 'active', memberIds: [] } });
  });

  it('lookup: a body outside the request schema is refused with 400', async () => {
    const body = { userIds: 'ann' };
    expect(() => identityLookup.request.parse(body)).toThrow();
    const response = await request(system.serviceUrls.identity, identityLookup.method, identityLookup.path, { headers: internalHeaders(app.id), body });
    expect(response.status).toBe(400);
  });
});

describe("gateway's CredentialStore (producer of identity's internal calls)", () => {
  const applicationId = randomUUID();
  const customerId = randomUUID();
  const sessionId = randomUUID();
  const cases = [
    {
      name: 'applicationCredentials',
      contract: identityInternal.applicationCredentials,
      path: identityInternal.applicationCredentials.path(applicationId),
      call: (store: CredentialStore) => store.application(applicationId, 'req-1'),
      valid: { id: applicationId, name: 'app', customerId, secret: 's3cret' },
      invalid: { id: applicationId, name: 'app', customerId, secret: '' },
    },
    {
      name: 'customerCredentials',
      contract: identityInternal.customerCredentials,
      path: identityInternal.customerCredentials.path(customerId),
      call: (store: CredentialStore) => store.customer(customerId, 'req-1'),
      valid: { id: customerId, secret: 's3cret' },
      invalid: { id: 'not-a-uuid', secret: 's3cret' },
    },
    {
      name: 'session',
      contract: identityInternal.session,
      path: identityInternal.session.path(sessionId),
      call: (store: CredentialStore) => store.session(sessionId, 'req-1'),
      valid: { id: sessionId, applicationId, expiresAt: null },
      invalid: { id: sessionId, expiresAt: null },
    },
  ];

  for (const testCase of cases) {
    it(`${testCase.name}: calls the contract's method and path and accepts a contract answer`, async () => {
      expect(testCase.contract.response.parse(testCase.valid)).toEqual(testCase.valid);
      await withFake(async (fake) => {
        fake.answer = () => ({ status: 200, body: testCase.valid });
        const result = await testCase.call(new CredentialStore(clientFor(fake), 60_000));
        expect(result).toEqual(testCase.valid);
        expect(fake.calls.map(({ method, path }) => ({ method, path }))).toEqual([{ method: testCase.contract.method, path: testCase.path }]);
        expect(fake.calls[0].headers['x-collab-internal-token']).toBe('contract-token');
      });
    });

    it(`${testCase.name}: an answer violating the response schema is bad_gateway, not accepted`, async () => {
      expect(() => testCase.contract.response.parse(testCase.invalid)).toThrow();
      await withFake(async (fake) => {
        fake.answer = () => ({ status: 200, body: testCase.invalid });
        const error = await rejection(testCase.call(new CredentialStore(clientFor(fake), 60_000)));
        expect(error).toBeInstanceOf(ApiError);
        expect({ code: (error as ApiError).code, status: (error as ApiError).status }).toEqual({ code: 'bad_gateway', status: 502 });
      });
    });
  }
});

describe('identity directory (producer of /internal/lookup)', () => {
  it('sends a body that parses with the request schema, and accepts a contract answer', async () => {
    await withFake(async (fake) => {
      const answer = { users: [{ id: 'ann', name: 'Ann', shortName: null, status: 'active', profilePictureURL: null, metadata: {} }], group: { id: 'g', status: 'active', memberIds: ['ann'] } };
      expect(identityLookup.response.parse(answer)).toEqual(answer);
      fake.answer = () => ({ status: 200, body: answer });
      const applicationId = randomUUID();
      const lookup = await identityDirectory(clientFor(fake)).lookup(applicationId, { userIds: ['ann', 'bob', 'ann'], groupId: 'g' }, 'req-2');
      expect(lookup.isMember('ann')).toBe(true);
      expect(lookup.users.get('ann')?.name).toBe('Ann');
      expect(fake.calls).toHaveLength(1);
      const [call] = fake.calls;
      expect({ method: call.method, path: call.path }).toEqual({ method: identityLookup.method, path: identityLookup.path });
      expect(call.headers['x-collab-application-id']).toBe(applicationId);
      expect(identityLookup.request.parse(call.body)).toEqual({ userIds: ['ann', 'bob'], groupId: 'g' });
    });
  });

  it('an answer violating the response schema is bad_gateway', async () => {
    await withFake(async (fake) => {
      const answer = { users: [{ id: 'ann', name: 'Ann', shortName: null, status: 'gone', profilePictureURL: null, metadata: {} }], group: null };
      expect(() => identityLookup.response.parse(answer)).toThrow();
      fake.answer = () => ({ status: 200, body: answer });
      const error = await rejection(identityDirectory(clientFor(fake)).lookup(randomUUID(), { userIds: ['ann'] }, 'req-3'));
      expect(error).toBeInstanceOf(ApiError);
      expect({ code: (error as ApiError).code, status: (error as ApiError).status }).toEqual({ code: 'bad_gateway', status: 502 });
    });
  });
});

describe("identity's deletion cascade (producer of /internal/cascade)", () => {
  const applicationId = randomUUID();
  const kinds = [
    { kind: 'group', id: 'g-1', run: (cascade: ReturnType<typeof dependentServicesCascade>) => cascade.groupDeleted(applicationId, 'g-1', 'req-4') },
    { kind: 'user', id: 'u-1', run: (cascade: ReturnType<typeof dependentServicesCascade>) => cascade.userDeleted(applicationId, 'u-1', 'req-4') },
    {
      kind: 'application',
      id: applicationId,
      run: (cascade: ReturnType<typeof dependentServicesCascade>) => cascade.applicationDeleted(applicationId, 'req-4'),
    },
  ];
  for (const { kind, id, run } of kinds) {
    it(`${kind}: sends a body that parses with the request schema to every service`, async () => {
      await withFake(async (first) =>
        withFake(async (second) => {
          for (const fake of [first, second]) fake.answer = () => ({ status: 200, body: cascadeContract.response.parse({ success: true }) });
          await run(dependentServicesCascade([clientFor(first), clientFor(second)]));
          for (const fake of [first, second]) {
            expect(fake.calls).toHaveLength(1);
            const [call] = fake.calls;
            expect({ method: call.method, path: call.path }).toEqual({ method: cascadeContract.method, path: cascadeContract.path });
            expect(call.headers['x-collab-application-id']).toBe(applicationId);
            expect(cascadeContract.request.parse(call.body)).toEqual({ kind, id });
          }
        }),
      );
    });
  }

  it('an answer violating the response schema fails the deletion', async () => {
    await withFake(async (fake) => {
      const answer = { ok: true };
      expect(() => cascadeContract.response.parse(answer)).toThrow();
      fake.answer = () => ({ status: 200, body: answer });
      const error = await rejection(dependentServicesCascade([clientFor(fake)]).groupDeleted(applicationId, 'g-2', 'req-5'));
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBeGreaterThanOrEqual(500);
    });
  });
});

describe('cascade endpoint (consumer) of conversation and notification', () => {
  for (const service of ['conversation', 'notification'] as const) {
    it(`${service}: a contract body answers 200 per the response schema`, async () => {
      const body = cascadeContract.request.parse({ kind: 'group', id: 'no-such-group' });
      const response = await request(system.serviceUrls[service], cascadeContract.method, cascadeContract.path, { headers: internalHeaders(app.id), body });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(cascadeContract.response.parse(response.body)).toEqual({ success: true });
    });

    it(`${service}: a body outside the request schema is 400`, async () => {
      for (const body of [{ kind: 'team', id: 'x' }, { kind: 'group' }, { kind: 'user', id: '' }]) {
        expect(() => cascadeContract.request.parse(body)).toThrow();
        const response = await request(system.serviceUrls[service], cascadeContract.method, cascadeContract.path, { headers: internalHeaders(app.id), body });
        expect(response.status, JSON.stringify(body)).toBe(400);
      }
    });
  }
});

/** A payload that the job's schema accepts, and one it refuses. */
function payloads(queue: QueueName, job: string): { valid: Record<string, unknown>; invalid: Record<string, unknown> } {
  // Jobs carry ids, never the work itself; an import belongs to a customer, the others to an application.
  const valid: Record<string, unknown> =
    queue === 'identity-import' ? { customerId: randomUUID(), importId: randomUUID(), requestId: randomUUID() } : { applicationId: randomUUID(), requestId: randomUUID() };
  if (queue === 'identity-batch') valid.batchId = randomUUID();
  if (queue === 'webhooks-delivery') valid.deliveryId = randomUUID();
  if (queue === 'mail-send') valid.mailId = randomUUID();
  if (queue === 'conversation-link-previews') valid.messageId = '1';
  const schema = (QUEUES[queue] as Record<string, { parse(value: unknown): unknown }>)[job];
  schema.parse(valid);
  const invalid = queue === 'identity-import' ? { ...valid, importId: 'not-a-uuid' } : { ...valid, applicationId: 'not-a-uuid' };
  expect(() => schema.parse(invalid)).toThrow();
  return { valid, invalid };
}

async function deletePrefix(prefix: string): Promise<void> {
  const redis = createRedis(system.env.REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

describe('job payloads', () => {
  const jobs = (Object.keys(QUEUES) as QueueName[]).flatMap((queue) => Object.keys(QUEUES[queue]).map((job) => ({ queue, job })));
  expect(jobs.length).toBeGreaterThan(0);

  for (const { queue, job } of jobs) {
    it(`${queue} ${job}: the producer refuses a payload outside the schema and adds a valid one`, async () => {
      const prefix = `contract-${randomBytes(6).toString('hex')}`;
      const producer = createProducer(queue, { redisUrl: system.env.REDIS_URL, prefix });
      try {
        const { valid, invalid } = payloads(queue, job);
        await expect(producer.add(job as never, invalid as never)).rejects.toThrow();
        const added = await producer.add(job as never, valid as never);
        const stored = await producer.getJob(added.id!);
        expect(stored?.data).toEqual(valid);
        expect(stored?.state).toBe('waiting');
        // The refused payload never reached Redis: the valid job is the only one.
        const connection = createRedis(system.env.REDIS_URL, { maxRetriesPerRequest: null });
        const raw = new Queue(queue, { connection, prefix: queuePrefix(prefix, queue) });
        try {
          expect(await raw.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed')).toEqual({ waiting: 1, active: 0, delayed: 0, completed: 0, failed: 0 });
        } finally {
          await raw.close();
          connection.disconnect();
        }
      } finally {
        await producer.close();
        await deletePrefix(prefix);
      }
    });

    it(`${queue} ${job}: the worker fails a raw job with an invalid payload without calling its handler`, async () => {
      const prefix = `contract-${randomBytes(6).toString('hex')}`;
      const handled: unknown[] = [];
      const handlers = Object.fromEntries(
        Object.keys(QUEUES[queue]).map((name) => [
          name,
          async (data: unknown) => {
            handled.push({ name, data });
            return { done: true };
          },
        ]),
      ) as unknown as JobHandlers<typeof queue>;
      const worker = startWorker(queue, handlers, { redisUrl: system.env.REDIS_URL, prefix, logger: createLogger('contract', 'silent') });
      const connection = createRedis(system.env.REDIS_URL, { maxRetriesPerRequest: null });
      const raw = new Queue(queue, { connection, prefix: queuePrefix(prefix, queue) });
      try {
        const { valid, invalid } = payloads(queue, job);
        const bad = await raw.add(job, invalid, { attempts: 5 });
        const good = await raw.add(job, valid, { attempts: 1 });
        const settled = async (id: string) => {
          for (let attempt = 0; attempt < 400; attempt++) {
            const state = await raw.getJobState(id);
            if (state === 'completed' || state === 'failed') return state;
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
          throw new Error(`job ${id} did not settle`);
        };
        expect(await settled(bad.id!)).toBe('failed');
        expect(await settled(good.id!)).toBe('completed');
        const failed = await raw.getJob(bad.id!);
        expect(failed?.failedReason).toMatch(/invalid payload/);
        // Unrecoverable: not retried although attempts remained.
        expect(failed?.attemptsMade).toBe(1);
        expect(handled).toEqual([{ name: job, data: valid }]);
      } finally {
        await worker.close();
        await raw.close();
        connection.disconnect();
        await deletePrefix(prefix);
      }
    });
  }
});
