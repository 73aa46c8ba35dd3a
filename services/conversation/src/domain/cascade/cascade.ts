/**
 * The conversation side of a deletion cascade (decisions.md 23, 31): make what the deleted group,
 * user or application owned unreadable now, and enqueue its physical purge.
 */
import { ENQUEUE_TIMEOUT_MS, type Producer } from '@collab/shared';
import { purgeOrder } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { purgeRepository } from '../../repositories/purge.repository.js';

export interface CascadeContext {
  db: DataSource;
  purgeQueue: Producer<'conversation-purge'>;
}

export async function applyCascade(
  ctx: CascadeContext,
  applicationId: string,
  target: { kind: 'group' | 'user' | 'application'; id: string },
  requestId: string,
): Promise<void> {
  const enqueueLimits = { timeoutMs: ENQUEUE_TIMEOUT_MS };
  // Marked (or recorded) and queued in one transaction: when Redis cannot take the job the marks
  // roll back, so a DELETE that answers 503 hides nothing; the job waits for the commit (purgeOrder).
  await ctx.db.transaction(async (tx) => {
    await purgeOrder.whileMarking(tx, 'conversation', applicationId);
    // An application's data is unreachable as soon as identity forgets it (no token verifies), so
    // it needs no marking: its deletion is recorded until the purge removed everything it owns.
    if (target.kind === 'application') {
      await purgeRepository.requestApplicationPurge(tx, applicationId, requestId);
      await ctx.purgeQueue.add('application.purge', { applicationId, requestId }, {}, enqueueLimits);
      return;
    }
    if (target.kind === 'group') await purgeRepository.markGroup(tx, applicationId, target.id);
    else await purgeRepository.markUser(tx, applicationId, target.id);
    await ctx.purgeQueue.add('marked.purge', { applicationId, requestId }, {}, enqueueLimits);
  });
}
