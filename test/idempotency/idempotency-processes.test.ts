/**
 * Idempotency-Key across replicas and failures, with real service processes (needs the build):
 * two replicas of a service share the keys (a repeat on the other replica replays, parallel
 * repeats on both write once); killed after
 * the write committed but before it answered, the retry finds the write's answer (stored in the
 * same transaction) and answers as the first would have; killed before the write, the retry is
 * told the key is in use until the dead request's lease runs out, then writes once; a first
 * request that failed with a 5xx (a service it needs unreachable) keeps nothing, and its retry runs.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { INTERNAL_HEADERS } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { freePort, until } from '@collab/shared/devkit';
import { uniqueId, type TestApplication } from '../support/client.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { killAll, spawnServiceProcess, stopProcess, type ServiceName } from '../support/processes.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

let system: TestSystem;
let app: TestApplication;

async function count(sql: string, parameters: unknown[]): Promise<number> {
  const { rows } = await system.sql.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${sql}`, parameters);
  return rows[0].count;
}

/** A service's API process on its own port, ready to serve. */
async function startService(service: ServiceName, env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawnServiceProcess(service, 'main-api', { ...system.env, PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'silent', ...env });
  const url = `http://127.0.0.1:${port}`;
  await until(async () => (await fetch(`${url}/readyz`).catch(() => null))?.status === 200, `${service} to be ready`);
  return { child, url };
}

/** What the gateway adds to a request it forwards: the internal credential and the verified application. */
const forwarded = (key: string) => ({
  [INTERNAL_HEADERS.internalToken]: system.env.INTERNAL_TOKEN,
  [INTERNAL_HEADERS.applicationId]: app.id,
  'Idempotency-Key': key,
});

// No batch worker: a batch request waits for its job (BATCH_WAIT_MS) after recording it.
systemWithApplication('killed service app', (started) => ({ system, app } = started), { workers: false, beforeStop: killAll, startTimeoutMs: 60_000 });

describe('a service killed after the write, before its answer', () => {
  it('answers the retry with the write it made, as the first request would have, and writes nothing again', async () => {
    const key = uniqueId('killed after write');
    const batch = { users: [{ id: 'kill-user', name: 'Kill User' }] };
    const batchesOf = () => count('identity.batches WHERE application_id = $1', [app.id]);
    const identity = await startService('identity', { BATCH_WAIT_MS: '60000' });
    const lost = fetch(`${identity.url}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...forwarded(key) },
      body: JSON.stringify(batch),
    }).then(
      () => 'answered',
      () => 'no answer',
    );
    // Committed: the batch's record and, in the same transaction, the answer for its key.
    await until(async () => (await batchesOf()) === 1, 'the batch to be recorded');
    await stopProcess(identity.child, 'SIGKILL');
    expect(await lost).toBe('no answer');
    const [{ job_id: jobId }] = (await system.sql.query<{ job_id: string }>('SELECT job_id FROM identity.batches WHERE application_id = $1', [app.id])).rows;

    const restarted = await startService('identity', { BATCH_WAIT_MS: '60000' });
    const retry = await fetch(`${restarted.url}/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...forwarded(key) },
      body: JSON.stringify(batch),
    });
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual({ success: true, message: 'Batch accepted.', jobID: jobId });
    expect(await batchesOf()).toBe(1);
    await stopProcess(restarted.child);
  }, 60_000);
});

describe('a service killed before the write', () => {
  it('leaves the key in use until its lease runs out, then the retry writes once', async () => {
    const key = uniqueId('killed before write');
    const filesOf = () => count(`conversation.files WHERE application_id = $1 AND owner_id <> ''`, [app.id]);
    await app.client.put('/v1/users/ann', { name: 'Ann' });
    const conversation = await startService('conversation');
    const boundary = 'kill-boundary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="ownerID"\r\n\r\nann\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="k.txt"\r\nContent-Type: text/plain\r\n\r\nkilled upload\r\n--${boundary}--\r\n`;
    // Half an upload: the request holds its key and an open transaction when the process dies.
    const upload = http.request(`${conversation.url}/v1/files`, {
      method: 'POST',
      headers: { ...forwarded(key), 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(Buffer.byteLength(body)) },
    });
    upload.on('error', () => undefined);
    upload.write(body.slice(0, 40));
    await until(async () => (await count('conversation.idempotency_keys WHERE key = $1', [key])) === 1, 'the upload to hold its key');
    await stopProcess(conversation.child, 'SIGKILL');
    expect(await filesOf()).toBe(0);

    const restarted = await startService('conversation');
    const send = () => {
      const form = new FormData();
      form.set('ownerID', 'ann');
      form.set('file', new Blob(['killed upload'], { type: 'text/plain' }), 'k.txt');
      return fetch(`${restarted.url}/v1/files`, { method: 'POST', headers: forwarded(key), body: form });
    };
    const early = await send();
    expect(early.status).toBe(409);
    expect(early.headers.get('retry-after')).toBe('1');
    const last: { retry?: Response } = {};
    await until(
      async () => {
        last.retry = await send();
        return last.retry.status !== 409;
      },
      'the lease of the dead request to run out',
      30_000,
      500,
    );
    expect(last.retry!.status).toBe(200);
    expect(last.retry!.headers.get('idempotent-replayed')).toBeNull();
    expect(await filesOf()).toBe(1);
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await last.retry!.json());
    expect(await filesOf()).toBe(1);
    await stopProcess(restarted.child);
  }, 60_000);
});

describe('a first request that failed with a 5xx', () => {
  it('is not kept: the retry with the same key runs again and writes once', async () => {
    const key = uniqueId('failed first');
    await app.client.put('/v1/users/ann', { name: 'Ann' });
    await app.client.put('/v1/groups/team', { name: 'Team', members: ['ann'] });
    const identityLink = await startFaultProxy({ port: Number(new URL(system.serviceUrls.identity).port) });
    const conversation = await startService('conversation', { IDENTITY_URL: `http://127.0.0.1:${identityLink.port}` });
    const thread = uniqueId('failed-thread');
    const post = () =>
      fetch(`${conversation.url}/v1/threads/${thread}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...forwarded(key) },
        body: JSON.stringify({
          authorID: 'ann',
          content: [{ type: 'p', children: [{ text: 'after a failure' }] }],
          createThread: { groupID: 'team', location: { page: thread }, url: 'https://example.com/f', name: 'Failed first' },
        }),
      });
    const messagesOf = () => count('conversation.messages WHERE application_id = $1', [app.id]);
    const before = await messagesOf();
    try {
      identityLink.down();
      const failed = await post();
      expect(failed.status).toBeGreaterThanOrEqual(500);
      expect(await count('conversation.idempotency_keys WHERE key = $1', [key])).toBe(0);
      await identityLink.accept();
      const retry = await post();
      expect(retry.status).toBe(200);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
      expect(await messagesOf()).toBe(before + 1);
    } finally {
      await stopProcess(conversation.child);
      identityLink.close();
    }
  }, 60_000);
});

describe('two replicas of a service', () => {
  it('share the keys: a repeat on the other replica replays, parallel repeats across both write once', async () => {
    const notificationsOf = () => count('notification.notifications WHERE application_id = $1', [app.id]);
    await app.client.put('/v1/users/ann', { name: 'Ann' });
    await app.client.put('/v1/users/bob', { name: 'Bob' });
    const replicas = [await startService('notification'), await startService('notification')];
    const post = (replica: { url: string }, key: string) =>
      fetch(`${replica.url}/v1/notifications`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...forwarded(key) },
        body: JSON.stringify({ actor_id: 'ann', recipient_id: 'bob', template: '{{actor}} replicated', url: 'https://example.com/r', type: 'url' }),
      });
    try {
      const before = await notificationsOf();
      const key = uniqueId('replicas');
      const first = await post(replicas[0], key);
      const second = await post(replicas[1], key);
      expect(first.status).toBe(200);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(await second.json()).toEqual(await first.json());
      expect(await notificationsOf()).toBe(before + 1);

      const parallelKey = uniqueId('replicas parallel');
      const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => post(replicas[index % 2], parallelKey)));
      expect(answers.filter((answer) => answer.status === 200 && answer.headers.get('idempotent-replayed') === null)).toHaveLength(1);
      expect(answers.every((answer) => answer.status === 200 || answer.status === 409)).toBe(true);
      expect(await notificationsOf()).toBe(before + 2);
    } finally {
      for (const replica of replicas) await stopProcess(replica.child);
    }
  }, 60_000);
});
