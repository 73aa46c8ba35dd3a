/** Waiting for background work without guessing how long it takes: poll the queues until idle. */
import { Queue } from 'bullmq';
import { createRedis, type QueueName } from '@collab/shared';
import type { TestSystem } from './system.js';

export async function waitForQueuesIdle(system: TestSystem, names: QueueName[] = ['conversation-purge', 'notification-purge'], timeoutMs = 20_000) {
  const connection = createRedis(system.env.REDIS_URL, { maxRetriesPerRequest: null });
  const queues = names.map((name) => new Queue(name, { connection, prefix: system.env.REDIS_PREFIX }));
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      const counts = await Promise.all(queues.map((queue) => queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'failed')));
      const failed = counts.reduce((sum, count) => sum + (count.failed ?? 0), 0);
      if (failed > 0) throw new Error(`a job failed: ${JSON.stringify(counts)}`);
      if (counts.every((count) => !count.waiting && !count.active && !count.delayed && !count.prioritized)) return;
      if (Date.now() > deadline) throw new Error(`queues still busy after ${timeoutMs} ms: ${JSON.stringify(counts)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
    connection.disconnect();
  }
}
