/**
 * Where a deletion in identity reaches the data other services own (decisions.md 23 and 31):
 * a deleted group's threads and messages, a deleted user's messages and notifications, everything
 * of a deleted application.
 *
 * Identity removes its own rows (users, groups, memberships, sessions) itself. The conversation
 * and notification services do not store anything yet, so there is nothing for the cascade to
 * reach. The queues issue (#4) replaces `identityOnlyCascade` with tombstone calls and BullMQ
 * purge jobs; until then this implementation only records that the cascade was requested.
 */
import type { Logger } from '@collab/shared';

export interface DeletionCascade {
  groupDeleted(applicationId: string, groupId: string, requestId: string): Promise<void>;
  /** Returns the ids of the user's files that could not be deleted. */
  userDeleted(applicationId: string, userId: string, requestId: string): Promise<{ failedFileIds: string[] }>;
  applicationDeleted(applicationId: string, requestId: string): Promise<void>;
}

export function identityOnlyCascade(logger: Logger): DeletionCascade {
  const note = (entity: string, fields: Record<string, string>) =>
    logger.info({ ...fields, entity }, 'deletion cascade: no conversation or notification data exists yet');
  return {
    async groupDeleted(applicationId, groupId, requestId) {
      note('group', { applicationId, groupId, requestId });
    },
    async userDeleted(applicationId, userId, requestId) {
      note('user', { applicationId, userId, requestId });
      return { failedFileIds: [] };
    },
    async applicationDeleted(applicationId, requestId) {
      note('application', { applicationId, requestId });
    },
  };
}
