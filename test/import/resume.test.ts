/**
 * An import whose worker is killed half-way resumes in another worker and ends as one clean run:
 * a real identity worker process imports the fixture while the notification service answers it
 * too slowly to finish, and is SIGKILLed once users, threads and messages are in; a second worker
 * takes the job over when its lock expires, passes over the tables already done, and completes.
 * Needs the build.
 */
import { describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { replayExpectedReads } from '../support/fixture-reads.js';
import { FIXTURE_DUMP, systemWithImporter, type Importer } from '../support/imports.js';
import { killAll, spawnServiceProcess, stopProcess } from '../support/processes.js';
import type { TestSystem } from '../support/system.js';

const JOB_LOCK_MS = 1000;

let system: TestSystem;
let importer: Importer;
let slowNotification: FaultProxy;

const startWorkerProcess = (env: Record<string, string> = {}) =>
  spawnServiceProcess('identity', 'main-worker', { ...system.env, JOB_LOCK_MS: String(JOB_LOCK_MS), METRICS_PORT: '0', LOG_LEVEL: 'silent', ...env });

systemWithImporter(async (started) => {
  ({ system, importer } = started);
  slowNotification = await startFaultProxy({ port: Number(new URL(system.serviceUrls.notification).port) });
}, {
  workers: false,
  beforeStop: () => {
    killAll();
    slowNotification?.close();
  },
  startTimeoutMs: 60_000,
});

describe('an import whose worker is killed half-way', () => {
  it('is resumed by another worker and ends with the data of one clean run', async () => {
    // Notifications come after messages in the dump: the first worker waits there.
    slowNotification.setLatency(60_000);
    const first = startWorkerProcess({ NOTIFICATION_URL: `http://127.0.0.1:${slowNotification.port}` });
    const importId = await importer.start(FIXTURE_DUMP);
    await until(async () => (await importer.find(importId))?.counts.reactions !== undefined, 'the import to reach the notifications', 60_000, 20);
    await stopProcess(first, 'SIGKILL');
    const halfway = (await importer.find(importId))!;
    expect(halfway.status).toBe('active');
    expect(halfway.counts.messages).toEqual({ imported: 46, existing: 0 });
    expect(halfway.counts.notifications).toBeUndefined();

    const second = startWorkerProcess();
    await until(async () => (await importer.find(importId))?.status === 'completed', 'the resumed import', 60_000, 20);
    await stopProcess(second, 'SIGTERM');

    const report = (await importer.find(importId))!;
    // The tables done before the kill were passed over: each row was imported once.
    expect(report.counts.messages).toEqual({ imported: 46, existing: 0 });
    expect(report.counts.notifications).toEqual({ imported: 67, existing: 0 });
    expect(report.counts.participants).toEqual({ imported: 33, existing: 0 });
    expect(report.counts.pages).toEqual({ imported: 12, existing: 0 });
    const { rows } = await system.sql.query<{ messages: number; notifications: number }>(
      `SELECT (SELECT count(*)::int FROM conversation.messages) AS messages, (SELECT count(*)::int FROM notification.notifications) AS notifications`,
    );
    expect(rows[0]).toEqual({ messages: 46, notifications: 67 });
    const unexplained = (await replayExpectedReads(system.url)).filter((difference) => difference.decision === null);
    expect(unexplained).toEqual([]);
  }, 180_000);
});
