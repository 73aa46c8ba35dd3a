/**
 * The conversation side of a deletion cascade (decisions.md 23, 31): make what the deleted group,
 * user or application owned unreadable now, and enqueue its physical purge.
 */
import type { Producer } from '@collab/shared';
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
  // An application's data is unreachable as soon as identity forgets it (no token verifies),
  // so it needs no marking: the purge removes everything it owns.
  if (target.kind === 'application') {
    await ctx.purgeQueue.add('application.purge', { applicationId, requestId });
    return;
  }
  await ctx.db.transaction(async (tx) => {
    if (target.kind === 'group') await purgeRepository.markGroup(tx, applicationId, target.id);
    else await purgeRepository.markUser(tx, applicationId, target.id);
  });
  await ctx.purgeQueue.add('marked.purge', { applicationId, requestId });
}
