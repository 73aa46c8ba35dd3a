/**
 * A purge survives its worker being killed: a real worker process is SIGKILLed in the middle of
 * purging 50,000 messages, another one picks the job up once its lock expires, and the purge
 * completes with nothing left behind and nothing else removed. Needs the build (`npm test` builds).
 */
import { createLogger } from '@collab/shared';
import { describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { createConversationDataSource } from '../../services/conversation/src/data-source.js';
import { purgeJobs } from '../../services/conversation/src/jobs/purge.jobs.js';
import { createApplication, type TestApplication } from '../support/client.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import { waitForQueuesIdle } from '../support/queues.js';
import * as rows from '../support/rows.js';
import { seedThread } from '../support/seed.js';
import { systemForFile, type TestSystem } from '../support/system.js';

const MESSAGES = 50_000;
let system: TestSystem;
let doomed: TestApplication;
let bystander: TestApplication;

const startWorkerProcess = () =>
  spawnServiceProcess('conversation', 'main-worker', { ...system.env, PURGE_BATCH_SIZE: '500', JOB_LOCK_MS: '1500', LOG_LEVEL: 'silent' });

const count = (sql: string, params: unknown[]) => rows.count(system, sql, params);
const threadMessages = (threadId: string) => rows.threadMessages(system, doomed.id, threadId);

async function seed(app: TestApplication, messagesInBigThread: number) {
  await app.client.put('/v1/users/ann', { name: 'Ann' });
  await seedThread(app, 'big', 'big-thread', messagesInBigThread);
  await seedThread(app, 'small', 'small-thread', 1);
}

systemForFile(async (started) => {
  system = started;
  doomed = await createApplication(system, 'doomed');
  bystander = await createApplication(system, 'bystander');
  await seed(doomed, MESSAGES);
  await seed(bystander, 10);
}, { workers: false, beforeStop: killAll, startTimeoutMs: 120_000 });

describe('a purge whose worker is killed', () => {
  it('is retried by another worker and completes with nothing left behind and nothing else removed', async () => {
    expect(await threadMessages('big-thread')).toBe(MESSAGES);
    expect((await doomed.client.delete('/v1/groups/big')).status).toBe(200);
    // Invisible at once, before any worker runs.
    expect((await doomed.client.get('/v1/threads/big-thread')).status).toBe(404);

    const first = startWorkerProcess();
    await until(async () => (await threadMessages('big-thread')) < MESSAGES - 1000, 'the purge to start');
    await stopProcess(first, 'SIGKILL');
    const leftAfterKill = await threadMessages('big-thread');
    expect(leftAfterKill).toBeGreaterThan(0);

    const second = startWorkerProcess();
    // Other applications are served while the purge runs.
    for (let request = 0; request < 20; request++) {
      expect((await bystander.client.get('/v1/threads/big-thread')).status).toBe(200);
      expect((await bystander.client.get('/v1/messages?limit=5')).status).toBe(200);
    }
    await waitForQueuesIdle(system, ['conversation-purge'], 60_000);
    await stopProcess(second);

    expect(await threadMessages('big-thread')).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM conversation.threads WHERE application_id = $1 AND group_id = 'big'`, [doomed.id])).toBe(0);
    // Nothing else removed: the other group of the same application and the other application.
    expect(await threadMessages('small-thread')).toBe(1);
    expect(await count(`SELECT count(*)::int AS n FROM conversation.messages WHERE application_id = $1`, [bystander.id])).toBe(11);
    expect((await bystander.client.get('/v1/threads/big-thread')).body.total).toBe(10);
  }, 120_000);

  it('changes nothing when the same purge runs again', async () => {
    const db = createConversationDataSource(system.env.DATABASE_URL, 2);
    await db.initialize();
    try {
      const before = await count(`SELECT count(*)::int AS n FROM conversation.messages`, []);
      const handlers = purgeJobs(db, { batchSize: 500, rowsPerSecond: 0 });
      const result = await handlers['marked.purge'](
        { applicationId: doomed.id, requestId: 'rerun' },
        undefined as never,
        createLogger('test', 'silent'),
      );
      expect(result).toEqual({ messages: 0, threads: 0, files: 0 });
      expect(await count(`SELECT count(*)::int AS n FROM conversation.messages`, [])).toBe(before);
    } finally {
      await db.destroy();
    }
  });

  it('on SIGTERM finishes (or hands back) the active job and exits cleanly; nothing is lost', async () => {
    await seedThread(doomed, 'second', 'second-thread', 20_001);
    expect((await doomed.client.delete('/v1/groups/second')).status).toBe(200);

    const worker = startWorkerProcess();
    await until(async () => (await threadMessages('second-thread')) < 20_000, 'the purge to start');
    expect(await stopProcess(worker)).toBe(0);

    // Whatever the stop left undone is still queued, and the next worker completes it.
    const next = startWorkerProcess();
    await waitForQueuesIdle(system, ['conversation-purge'], 60_000);
    await stopProcess(next);
    expect(await threadMessages('second-thread')).toBe(0);
    expect(await threadMessages('small-thread')).toBe(1);
  }, 120_000);
});
