/**
 * The notification side of a deletion cascade (decisions.md 23, 31): notifications to or from a
 * deleted user become unreadable now; a deleted application's are purged. Groups own none here.
 */
import type { Producer } from '@collab/shared';
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
  if (target.kind === 'application') {
    await ctx.purgeQueue.add('application.purge', { applicationId, requestId });
    return;
  }
  await notificationPurgeRepository.markUser(ctx.db, applicationId, target.id);
  await ctx.purgeQueue.add('marked.purge', { applicationId, requestId });
}
