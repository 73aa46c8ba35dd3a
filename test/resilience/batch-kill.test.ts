/**
 * A batch survives its worker being killed: a real identity worker process is SIGKILLed while it
 * applies a POST /v1/batch of 10,000 users and 100 groups; its transaction rolls back, another
 * worker picks the job up once its lock expires, and the batch is applied exactly once: the same
 * rows as the same batch applied without the fault. Prints the recovery time. Needs the build.
 */
import { describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { createApplication, type TestApplication } from '../support/client.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { systemForFile, type TestSystem } from '../support/system.js';

const USERS = 10_000;
const GROUPS = 100;
const JOB_LOCK_MS = 1500;

let system: TestSystem;

const startWorkerProcess = () =>
  spawnServiceProcess('identity', 'main-worker', { ...system.env, JOB_LOCK_MS: String(JOB_LOCK_MS), METRICS_PORT: '0', LOG_LEVEL: 'silent' });

const batchBody = {
  users: Array.from({ length: USERS }, (_, index) => ({ id: `user-${index}`, name: `User ${index}`, metadata: { index } })),
  groups: Array.from({ length: GROUPS }, (_, index) => ({
    id: `group-${index}`,
    name: `Group ${index}`,
    members: Array.from({ length: USERS / GROUPS }, (_, member) => `user-${index * (USERS / GROUPS) + member}`),
  })),
};

/** Rows the batch wrote for one application. */
async function rowsOf(applicationId: string) {
  const { rows } = await system.sql.query(
    `SELECT (SELECT count(*)::int FROM identity.users WHERE application_id = $1) AS users,
            (SELECT count(*)::int FROM identity.groups WHERE application_id = $1) AS groups,
            (SELECT count(*)::int FROM identity.group_members WHERE application_id = $1) AS members`,
    [applicationId],
  );
  return rows[0] as { users: number; groups: number; members: number };
}

const statusOf = async (app: TestApplication, jobId: string) => (await app.client.get(`/v1/batch/${jobId}`)).body.status;

systemForFile((started) => (system = started), { workers: false, env: { BATCH_WAIT_MS: '0' }, beforeStop: killAll, startTimeoutMs: 60_000 });

describe('a batch whose worker is killed', () => {
  it('is retried by another worker and applied exactly once, as without the fault', async () => {
    const clean = await createApplication(system, 'clean run');
    const faulted = await createApplication(system, 'killed worker');

    const first = startWorkerProcess();
    const accepted = await faulted.client.post('/v1/batch', batchBody);
    expect(accepted.status).toBe(202);
    // Polled every 10 ms, so that the kill lands while the batch is being applied.
    await until(async () => (await statusOf(faulted, accepted.body.jobID)) === 'active', 'the batch to start', 30_000, 10);
    await stopProcess(first, 'SIGKILL');
    const killedAt = Date.now();
    // One transaction: nothing of it is visible after the kill.
    expect(await rowsOf(faulted.id)).toEqual({ users: 0, groups: 0, members: 0 });
    expect(await statusOf(faulted, accepted.body.jobID)).toBe('active');

    const second = startWorkerProcess();
    await until(async () => (await statusOf(faulted, accepted.body.jobID)) === 'completed', 'the retried batch', 45_000, 10);
    const recoveredMs = Date.now() - killedAt;

    const cleanRun = await clean.client.post('/v1/batch', batchBody);
    await until(async () => (await statusOf(clean, cleanRun.body.jobID)) === 'completed', 'the clean batch', 45_000, 10);
    await waitForQueuesIdle(system, ['identity-batch'], 10_000);
    await stopProcess(second, 'SIGTERM');

    expect(await rowsOf(faulted.id)).toEqual({ users: USERS, groups: GROUPS, members: USERS });
    expect(await rowsOf(faulted.id)).toEqual(await rowsOf(clean.id));
    const group = await faulted.client.get('/v1/groups/group-7');
    expect(group.body.members.length).toBe(USERS / GROUPS);
    console.log('[fault figures]', JSON.stringify({ fault: 'identity worker SIGKILLed mid-batch', jobLockMs: JOB_LOCK_MS, completedAfterKillMs: recoveredMs }));
  }, 120_000);
});
