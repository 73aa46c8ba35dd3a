/**
 * Where a deletion in identity reaches the data other services own (decisions.md 23 and 31): a
 * deleted group's threads and messages, a deleted user's messages, files and notifications,
 * everything of a deleted application. Each dependent service makes that data unreadable when
 * called and purges it with BullMQ jobs; a failed call is a 503, and repeating the DELETE finishes.
 */
import { ApiError, cascadeContract, type InternalClient } from '@collab/shared';

export interface DeletionCascade {
  groupDeleted(applicationId: string, groupId: string, requestId: string): Promise<void>;
  /** Returns the ids of the user's files that could not be deleted (none: files are purged by jobs). */
  userDeleted(applicationId: string, userId: string, requestId: string): Promise<{ failedFileIds: string[] }>;
  applicationDeleted(applicationId: string, requestId: string): Promise<void>;
}

export function dependentServicesCascade(services: InternalClient[]): DeletionCascade {
  const reach = async (applicationId: string, kind: 'group' | 'user' | 'application', id: string, requestId: string) => {
    const body = cascadeContract.request.parse({ kind, id });
    try {
      await Promise.all(
        services.map(async (service) =>
          cascadeContract.response.parse(await service.call('POST', cascadeContract.path, { applicationId, requestId, body })),
        ),
      );
    } catch (error) {
      if (error instanceof ApiError && error.status >= 500) throw error;
      throw new ApiError('service_unavailable', 'The deletion could not reach every service. Try again.', {
        headers: { 'Retry-After': '1' },
      });
    }
  };
  return {
    groupDeleted: (applicationId, groupId, requestId) => reach(applicationId, 'group', groupId, requestId),
    async userDeleted(applicationId, userId, requestId) {
      await reach(applicationId, 'user', userId, requestId);
      return { failedFileIds: [] };
    },
    applicationDeleted: (applicationId, requestId) => reach(applicationId, 'application', applicationId, requestId),
  };
}
