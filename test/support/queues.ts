/** Waiting for background work without guessing how long it takes: poll the queues until idle. */
import { Queue } from 'bullmq';
import { createRedis, queuePrefix, QUEUES, type QueueName } from '@collab/shared';
import type { TestSystem } from './system.js';

/** `failedIsError: false` lets failed jobs be (a batch its job rejected, a webhook refused for good). */
export async function waitForQueuesIdle(
  system: TestSystem,
  names: QueueName[] = ['conversation-purge', 'notification-purge', 'webhooks-purge'],
  timeoutMs = 20_000,
  { failedIsError = true } = {},
) {
  const connection = createRedis(system.env.REDIS_URL, { maxRetriesPerRequest: null });
  const queues = names.map((name) => new Queue(name, { connection, prefix: queuePrefix(system.env.REDIS_PREFIX, name) }));
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const counts = await Promise.all(queues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed')));
      const failed = counts.reduce((sum, count) => sum + (count.failed ?? 0), 0);
      if (failed > 0 && failedIsError) throw new Error(`a job failed: ${JSON.stringify(counts)}`);
      if (counts.every((count) => !count.waiting && !count.active && !count.delayed && !count.prioritized)) return;
      if (Date.now() > deadline) throw new Error(`queues still busy after ${timeoutMs} ms: ${JSON.stringify(counts)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    connection.disconnect();
  }
}

/**
 * Waits until no background work is left: every service's outbox empty (recorded events and
 * deletions relayed) and every queue idle, both seen in one pass, since a relayed entry may queue
 * a job and a job may record an entry.
 */
export async function waitForBackgroundWork(system: TestSystem, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // mail-send holds each mail EMAIL_DELAY_SECONDS (an hour in test systems) before it is due: not
  // work a test waits for; the mail tests wait for their mails themselves.
  const queueNames = (Object.keys(QUEUES) as QueueName[]).filter((name) => name !== 'mail-send');
  for (;;) {
    const { rows: outboxes } = await system.sql.query<{ schema: string }>(
      `SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'outbox' AND table_type = 'BASE TABLE'`,
    );
    let waiting = 0;
    for (const { schema } of outboxes) waiting += (await system.sql.query<{ count: number }>(`SELECT count(*)::int AS count FROM "${schema}".outbox`)).rows[0].count;
    if (waiting === 0) {
      await waitForQueuesIdle(system, queueNames, Math.max(1, deadline - Date.now()), { failedIsError: false });
      const { rows } = await system.sql.query<{ count: number }>(
        outboxes.map(({ schema }) => `SELECT count(*)::int AS count FROM "${schema}".outbox`).join(' UNION ALL ') || 'SELECT 0 AS count',
      );
      if (rows.every((row) => row.count === 0)) return;
    }
    if (Date.now() > deadline) throw new Error(`background work still pending after ${timeoutMs} ms (${waiting} outbox entries)`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
