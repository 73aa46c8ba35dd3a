/**
 * Postgres connections killed with `pg_terminate_backend` (found by each pool's application_name):
 * - mid-request, during a multi-statement write (a group's membership replaced): the client gets
 *   its answer or a clean 503 `service_unavailable` with Retry-After, never a 500, and repeating
 *   the request ends in the state a run without the fault reaches;
 * - mid-job, during a batch and a purge run by real worker processes: the job is retried, the
 *   worker survives, and the final state equals a clean run's.
 * Prints how many connections were killed and how long recovery took (`[fault figures]`). Needs the build.
 */
import type { ChildProcess } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { createApplication, type ApiResponse, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { killAll, spawnServiceProcess } from '../support/processes.js';
import { waitForQueuesIdle } from '../support/queues.js';
import * as rows from '../support/rows.js';
import { seedThread } from '../support/seed.js';
import { systemForFile, type TestSystem } from '../support/system.js';

const MEMBERS = 3000;
const BATCH_USERS = 5000;
const MESSAGES = 30_000;
/** How long the workers' connections keep being killed once their job has started. */
const KILLING_MS = 1000;

let system: TestSystem;
let app: TestApplication;
let databaseName: string;
/** The worker processes, which must survive their connections being killed. */
const workers: ChildProcess[] = [];

function startWorkerProcess(service: 'identity' | 'conversation'): ChildProcess {
  const child = spawnServiceProcess(service, 'main-worker', { ...system.env, PURGE_BATCH_SIZE: '500', METRICS_PORT: '0', LOG_LEVEL: 'silent' });
  workers.push(child);
  return child;
}

const count = (sql: string, params: unknown[]) => rows.count(system, sql, params);

/** Terminates every connection of this system's database opened by a pool of that application_name. */
async function terminate(applicationName: string): Promise<number> {
  const result = await system.sql.query(
    `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
     WHERE datname = $1 AND application_name = $2`,
    [databaseName, applicationName],
  );
  return result.rows[0].n;
}

/** Keeps terminating the connections of `applicationName` until `work` settles; returns its result and the kill count. */
async function whileTerminating<T>(applicationName: string, work: Promise<T>, everyMs = 30): Promise<{ result: T; killed: number }> {
  let settled = false;
  let killed = 0;
  const killing = (async () => {
    while (!settled) {
      killed += await terminate(applicationName);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  try {
    return { result: await work, killed };
  } finally {
    settled = true;
    await killing;
  }
}

systemForFile(async (started) => {
  system = started;
  databaseName = new URL(system.env.DATABASE_URL).pathname.slice(1);
  app = await createApplication(system, 'postgres faults');
  startWorkerProcess('identity');
  startWorkerProcess('conversation');
}, { workers: false, env: { BATCH_WAIT_MS: '0' }, beforeStop: killAll, startTimeoutMs: 60_000 });

describe('identity connections killed in the middle of a request', () => {
  it('answers the request or a clean 503, and a repeat reaches the state of a clean run', async () => {
    const memberIds = Array.from({ length: MEMBERS }, (_, index) => `member-${index}`);
    await system.sql.query(
      `INSERT INTO identity.users (application_id, external_id, name) SELECT $1, unnest($2::text[]), 'Member'`,
      [app.id, memberIds],
    );
    const statuses: number[] = [];
    let killed = 0;
    for (let attempt = 0; attempt < 5; attempt++) {
      const put = app.client.put('/v1/groups/crowd', { name: 'Crowd', members: memberIds.slice(0, MEMBERS - attempt) });
      const { result, killed: now } = await whileTerminating('collab-identity', put);
      killed += now;
      statuses.push(result.status);
      if (result.status !== 200) {
        expectError(result as ApiResponse, 503, 'service_unavailable');
        expect(result.headers.get('retry-after')).toBe('1');
      }
    }
    // Without the fault: the last membership written, exactly.
    const recoveredMs = await until(async () => (await app.client.put('/v1/groups/crowd', { name: 'Crowd', members: memberIds })).status === 200, 'a clean PUT');
    const group = await app.client.get('/v1/groups/crowd');
    expect(group.status).toBe(200);
    expect(group.body.members.length).toBe(MEMBERS);
    expect(
      await count(
        `SELECT count(*)::int AS n FROM identity.group_members gm JOIN identity.groups g ON g.internal_id = gm.group_id
         WHERE g.application_id = $1 AND g.external_id = 'crowd'`,
        [app.id],
      ),
    ).toBe(MEMBERS);
    console.log('[fault figures]', JSON.stringify({ fault: 'identity connections killed mid-request', statuses, connectionsKilled: killed, cleanPutAfterMs: recoveredMs }));
  }, 60_000);
});

describe('worker connections killed in the middle of a job', () => {
  it('retries the batch and the purge; both end as a clean run does and the workers survive', async () => {
    const ids = Array.from({ length: BATCH_USERS }, (_, index) => `batch-${index}`);
    const accepted = await app.client.post('/v1/batch', { users: ids.map((id) => ({ id, name: id })) });
    expect(accepted.status).toBe(202);
    const batchStatus = async () => (await app.client.get(`/v1/batch/${accepted.body.jobID}`)).body.status;
    await until(async () => (await batchStatus()) === 'active', 'the batch to start');
    const batch = await whileTerminating('collab-identity-worker', new Promise((resolve) => setTimeout(resolve, KILLING_MS)));
    const batchMs = await until(async () => (await batchStatus()) === 'completed', 'the batch');

    // A purge of a big thread, its worker's connections killed while it deletes.
    expect((await app.client.put('/v1/users/ann', { name: 'Ann' })).status).toBe(200);
    await seedThread(app, 'doomed', 'doomed-thread', MESSAGES);
    const messagesLeft = () => count(`SELECT count(*)::int AS n FROM conversation.messages WHERE application_id = $1`, [app.id]);
    expect((await app.client.delete('/v1/groups/doomed')).status).toBe(200);
    await until(async () => (await messagesLeft()) < MESSAGES, 'the purge to start');
    const purge = await whileTerminating('collab-conversation-worker', new Promise((resolve) => setTimeout(resolve, KILLING_MS)));
    const purgeMs = await until(async () => (await messagesLeft()) === 0, 'the purge', 45_000);
    await waitForQueuesIdle(system, ['identity-batch', 'conversation-purge'], 30_000);

    expect(await count(`SELECT count(*)::int AS n FROM identity.users WHERE application_id = $1 AND external_id LIKE 'batch-%'`, [app.id])).toBe(BATCH_USERS);
    expect(await count(`SELECT count(*)::int AS n FROM conversation.threads WHERE application_id = $1`, [app.id])).toBe(0);
    expect(batch.killed).toBeGreaterThan(0);
    expect(purge.killed).toBeGreaterThan(0);
    for (const worker of workers) expect(worker.exitCode).toBeNull();
    console.log(
      '[fault figures]',
      JSON.stringify({
        fault: `worker connections killed every 30 ms for ${KILLING_MS} ms mid-job`,
        batch: { connectionsKilled: batch.killed, completedAfterMs: batchMs },
        purge: { connectionsKilled: purge.killed, completedAfterKillsEndedMs: purgeMs },
      }),
    );
  }, 60_000);
});
