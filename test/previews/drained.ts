/**
 * Waiting for the link previews asked for so far: the conversation worker's relay queues a
 * message's preview job from the outbox entry its create or edit recorded, so the outbox must be
 * empty first (every job queued), then the queue idle (every job run). A job records no entry, so
 * one pass of each is enough.
 */
import { until } from '@collab/shared/devkit';
import { waitForQueuesIdle } from '../support/queues.js';
import type { TestSystem } from '../support/system.js';

/** `redisUrl`: the Redis of the worker that runs the jobs, when it is not the system's. */
export async function previewsDrained(system: TestSystem, redisUrl = system.env.REDIS_URL): Promise<void> {
  await until(
    async () => (await system.sql.query<{ count: number }>('SELECT count(*)::int AS count FROM conversation.outbox')).rows[0].count === 0,
    'the conversation outbox relay to queue the preview jobs',
    20_000,
  );
  await waitForQueuesIdle({ ...system, env: { ...system.env, REDIS_URL: redisUrl } }, ['conversation-link-previews']);
}
