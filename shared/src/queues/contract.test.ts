import { describe, expect, it } from 'vitest';
import { DEFAULT_JOB_OPTIONS, QUEUE_JOB_OPTIONS, type QueueName } from './contract.js';

/** How long a queue's job waits between its first and its last attempt: BullMQ's exponential backoff doubles `delay` after each. */
function retryWindowMs(queue: QueueName): number {
  const options = { ...DEFAULT_JOB_OPTIONS, ...QUEUE_JOB_OPTIONS[queue] };
  const { delay } = options.backoff as { delay: number };
  let total = 0;
  for (let retry = 1; retry < options.attempts!; retry++) total += delay * 2 ** (retry - 1);
  return total;
}

describe('retries of the jobs that call other services', () => {
  it('an accepted import outlasts a service that is down or restarting for ten minutes', () => {
    expect(retryWindowMs('identity-import')).toBeGreaterThanOrEqual(10 * 60_000);
  });
});
