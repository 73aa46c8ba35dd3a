/**
 * The notification side of a deletion cascade (decisions.md 23, 31): notifications to or from a
 * deleted user become unreadable now; a deleted application's are purged. Groups own none here.
 */
import { ENQUEUE_TIMEOUT_MS, type Producer } from '@collab/shared';
import { purgeOrder } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { notificationPurgeRepository } from '../../repositories/notifications.repository.js';

export interface CascadeContext {
  db: DataSource;
  purgeQueue: Producer<'notification-purge'>;
}

export async function applyCascade(
  ctx: CascadeContext,
  applicationId: string,
  target: { kind: 'group' | 'user' | 'application'; id: string },
  requestId: string,
): Promise<void> {
  if (target.kind === 'group') return;
  const enqueueLimits = { timeoutMs: ENQUEUE_TIMEOUT_MS };
  // Marked (or recorded) and queued in one transaction: when Redis cannot take the job the marks
  // roll back, so a DELETE that answers 503 hides nothing; the job waits for the commit (purgeOrder).
  await ctx.db.transaction(async (tx) => {
    await purgeOrder.whileMarking(tx, 'notification', applicationId);
    // A deleted application's notifications need no marking (no token of it verifies): its
    // deletion is recorded until the purge removed them.
    if (target.kind === 'application') {
      await notificationPurgeRepository.requestApplicationPurge(tx, applicationId, requestId);
      await ctx.purgeQueue.add('application.purge', { applicationId, requestId }, {}, enqueueLimits);
      return;
    }
    await notificationPurgeRepository.markUser(tx, applicationId, target.id);
    await ctx.purgeQueue.add('marked.purge', { applicationId, requestId }, {}, enqueueLimits);
  });
}
