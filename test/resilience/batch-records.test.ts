/**
 * The durable record of a batch (identity.batches), so that no accepted batch is lost:
 * - GET /v1/batch/<jobID> answers from the record: the outcome stays readable after Redis forgot
 *   the job.
 * - A batch's job run twice at once (a retry while a stalled run goes on, a job queued again)
 *   applies it once; a run after it finished reports the recorded outcome, a failure included.
 * - The identity worker's periodic pass prunes finished records past their retention (completed
 *   and failed each their own) and queues again, under the batch's own id, the unfinished ones.
 * - A batch's body (users' names and e-mails) never goes to Redis, whose job carries only the
 *   record's id, and is cleared from the record once the batch is finished, applied or failed.
 */
import { randomUUID } from 'node:crypto';
import { createLogger, createRedis, queuePrefix, type JobData } from '@collab/shared';
import { Queue } from 'bullmq';
import type { DataSource } from 'typeorm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createIdentityDataSource } from '../../services/identity/src/data-source.js';
import type { BatchInput } from '../../services/identity/src/domain/batch/batch-plan.js';
import { batchJobs, pendingBatches } from '../../services/identity/src/jobs/batch.jobs.js';
import { createApplication, type TestApplication } from '../support/client.js';
import { systemWithApplication, type TestSystem } from '../support/system.js';

const logger = createLogger('test', 'silent');
/** What a handler needs of a BullMQ job: its attempt (the first of many). */
const firstAttempt = { attemptsMade: 0, opts: { attempts: 20 } } as never;

let system: TestSystem;
let app: TestApplication;
let db: DataSource;

systemWithApplication('batch records', async (started) => {
  ({ system, app } = started);
  db = createIdentityDataSource(system.env.DATABASE_URL, 4);
  await db.initialize();
}, { beforeStop: () => db?.destroy(), startTimeoutMs: 60_000 });

async function record(jobId: string): Promise<{ state: string; message: string | null; error: unknown } | undefined> {
  const { rows } = await system.sql.query(`SELECT state, message, error FROM identity.batches WHERE job_id = $1`, [jobId]);
  return rows[0];
}

/** Records a batch as the request does, and returns the job payload that applies it. */
async function recorded(batch: BatchInput): Promise<JobData<'identity-batch', 'batch.apply'>> {
  const batchId = randomUUID();
  await system.sql.query(`INSERT INTO identity.batches (job_id, application_id, payload) VALUES ($1, $2, $3)`, [batchId, app.id, batch]);
  return { applicationId: app.id, requestId: randomUUID(), batchId };
}

describe('GET /v1/batch/<jobID>', () => {
  it('answers from the record once Redis no longer holds the job', async () => {
    const response = await app.client.post('/v1/batch', { users: [{ id: 'kept-status', name: 'Kept' }] });
    expect(response.status).toBe(200);
    const { rows } = await system.sql.query(`SELECT job_id FROM identity.batches WHERE application_id = $1`, [app.id]);
    expect(rows).toHaveLength(1);
    const jobId: string = rows[0].job_id;

    const connection = createRedis(system.env.REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue('identity-batch', { connection, prefix: queuePrefix(system.env.REDIS_PREFIX, 'identity-batch') });
    try {
      await queue.remove(jobId);
      expect(await queue.getJob(jobId)).toBeUndefined();
    } finally {
      await queue.close();
      connection.disconnect();
    }
    expect((await app.client.get(`/v1/batch/${jobId}`)).body).toEqual({
      status: 'completed',
      message: 'You successfully batch updated 1 user and 0 groups',
    });
  });
});

describe("a batch's body", () => {
  let bodies: TestApplication;
  beforeAll(async () => {
    bodies = await createApplication(system, 'batch bodies');
  });

  /** The newest batch of the application: its id and its body as recorded. */
  async function latestBatch(): Promise<{ jobId: string; payload: unknown }> {
    const { rows } = await system.sql.query(
      `SELECT job_id AS "jobId", payload FROM identity.batches WHERE application_id = $1 ORDER BY created_at DESC LIMIT 1`,
      [bodies.id],
    );
    return rows[0];
  }

  /** The BullMQ job's hash as Redis holds it: every field, data included. */
  async function jobHash(jobId: string): Promise<Record<string, string>> {
    const redis = createRedis(system.env.REDIS_URL);
    try {
      return await redis.hgetall(`${queuePrefix(system.env.REDIS_PREFIX, 'identity-batch')}:identity-batch:${jobId}`);
    } finally {
      redis.disconnect();
    }
  }

  it('never reaches Redis and is cleared from the record once applied; the status still reads completed', async () => {
    const response = await bodies.client.post('/v1/batch', {
      users: [{ id: 'body-ann', name: 'Ann Secretname', email: 'ann.secret@example.com' }],
      groups: [{ id: 'body-group', name: 'Body Group', members: ['body-ann'] }],
    });
    expect(response.status).toBe(200);
    const { jobId, payload } = await latestBatch();
    expect(payload).toBeNull();

    const hash = await jobHash(jobId);
    expect(JSON.parse(hash.data)).toEqual({ applicationId: bodies.id, requestId: expect.any(String), batchId: jobId });
    expect(hash.finishedOn).toBeDefined();
    expect(JSON.stringify(hash)).not.toMatch(/Secretname|ann\.secret@example\.com/);

    expect((await bodies.client.get(`/v1/batch/${jobId}`)).body).toEqual({
      status: 'completed',
      message: 'You successfully batch updated 1 user and 1 group',
    });
  });

  it('is cleared from the record of a batch that failed; the status still reads its error', async () => {
    const response = await bodies.client.post('/v1/batch', {
      users: [{ id: 'body-bob', name: 'Bob Secretname', email: 'bob.secret@example.com' }],
      groups: [{ id: 'body-never', name: 'Never', members: ['body-bob', 'body-nobody'] }],
    });
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('user_not_found');
    const { jobId, payload } = await latestBatch();
    expect(payload).toBeNull();
    expect(JSON.stringify(await jobHash(jobId))).not.toMatch(/Secretname|bob\.secret@example\.com/);
    expect((await bodies.client.get(`/v1/batch/${jobId}`)).body).toEqual({
      status: 'failed',
      error: { error: 'user_not_found', message: 'Platform user body-nobody not found.' },
    });
  });
});

describe('a recorded batch run more than once', () => {
  it('is applied once when two runs race, and a later run reports the recorded outcome', async () => {
    const handlers = batchJobs(db, async () => undefined);
    const payload = await recorded({
      users: [{ id: 'race-1', name: 'One' }, { id: 'race-2' }],
      groups: [{ id: 'race-group', name: 'Race', members: ['race-1', 'race-2'] }],
    });
    const [first, second] = await Promise.all([
      handlers['batch.apply'](payload, firstAttempt, logger),
      handlers['batch.apply'](payload, firstAttempt, logger),
    ]);
    expect(first).toEqual(second);
    expect(await record(payload.batchId)).toEqual({ state: 'completed', message: 'You successfully batch updated 2 users and 1 group', error: null });
    const members = await system.sql.query(
      `SELECT count(*)::int AS n FROM identity.group_members m JOIN identity.groups g ON g.internal_id = m.group_id
       WHERE g.application_id = $1 AND g.external_id = 'race-group'`,
      [app.id],
    );
    expect(members.rows[0].n).toBe(2);

    // The record keeps the outcome: a run after it finished writes nothing again.
    await system.sql.query(`UPDATE identity.users SET name = 'Changed since' WHERE application_id = $1 AND external_id = 'race-1'`, [app.id]);
    expect(await handlers['batch.apply'](payload, firstAttempt, logger)).toEqual(first);
    expect((await app.client.get('/v1/users/race-1')).body.name).toBe('Changed since');
  });

  it('records a rejection as failed, and a later run fails with the same error', async () => {
    const handlers = batchJobs(db, async () => undefined);
    const payload = await recorded({ groups: [{ id: 'never', name: 'Never', members: ['nobody'] }] });
    await expect(handlers['batch.apply'](payload, firstAttempt, logger)).rejects.toMatchObject({ code: 'user_not_found' });
    const failed = await record(payload.batchId);
    expect(failed).toEqual({ state: 'failed', message: null, error: { error: 'user_not_found', message: 'Platform user nobody not found.' } });
    expect((await app.client.get(`/v1/batch/${payload.batchId}`)).body).toEqual({ status: 'failed', error: failed!.error });

    await system.sql.query(`INSERT INTO identity.users (application_id, external_id) VALUES ($1, 'nobody')`, [app.id]);
    await expect(handlers['batch.apply'](payload, firstAttempt, logger)).rejects.toMatchObject({ code: 'user_not_found' });
    expect(await record(payload.batchId)).toEqual(failed);
  });
});

describe("the identity worker's periodic pass", () => {
  it('prunes finished records past their retention and returns the unfinished ones as jobs of their own id', async () => {
    // As batches are left: a body only while unfinished.
    const insert = async (state: string, finishedHoursAgo: number | null, createdHoursAgo = finishedHoursAgo ?? 0) => {
      const jobId = randomUUID();
      await system.sql.query(
        `INSERT INTO identity.batches (job_id, application_id, payload, state, message, error, created_at, finished_at)
         VALUES ($1, $2, CASE WHEN $5::int IS NULL THEN '{"users": [{"id": "pending-user"}]}'::jsonb END, $3,
                 CASE WHEN $3 = 'completed' THEN 'done' END,
                 CASE WHEN $3 = 'failed' THEN '{"error": "error", "message": "failed"}'::jsonb END,
                 now() - make_interval(hours => $4), now() - make_interval(hours => $5::int))`,
        [jobId, app.id, state, createdHoursAgo, finishedHoursAgo],
      );
      return jobId;
    };
    const oldCompleted = await insert('completed', 25);
    const recentCompleted = await insert('completed', 23);
    const oldFailed = await insert('failed', 8 * 24);
    const dayOldFailed = await insert('failed', 25);
    const unfinished = await insert('active', null, 30);

    const pending = await pendingBatches(db, { completedHours: 24, failedHours: 7 * 24 });
    const left = await system.sql.query(`SELECT job_id FROM identity.batches WHERE job_id = ANY($1)`, [
      [oldCompleted, recentCompleted, oldFailed, dayOldFailed, unfinished],
    ]);
    expect(new Set(left.rows.map((row) => row.job_id))).toEqual(new Set([recentCompleted, dayOldFailed, unfinished]));
    expect(pending.filter((job) => job.data.applicationId === app.id)).toEqual([
      {
        name: 'batch.apply',
        data: { applicationId: app.id, requestId: 'pending-work', batchId: unfinished },
        key: `batch-${unfinished}`,
        jobId: unfinished,
      },
    ]);
    await system.sql.query(`DELETE FROM identity.batches WHERE job_id = $1`, [unfinished]);
  });
});
