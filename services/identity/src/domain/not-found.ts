import { ApiError } from '@collab/shared';

/** `Platform user X not found.` / `Platform users X and Y not found.` / `Platform users X, Y, and Z not found.` */
export function usersNotFound(ids: readonly string[]): ApiError {
  const list =
    ids.length <= 2 ? ids.join(' and ') : `${ids.slice(0, -1).join(', ')}, and ${ids[ids.length - 1]}`;
  return new ApiError('user_not_found', `Platform ${ids.length === 1 ? 'user' : 'users'} ${list} not found.`);
}

/**
 * How an unknown group is reported: `group_not_found` on /v1/groups (404 on reads, 401 on writes)
 * and `401 organization_not_found` on /v1/organizations.
 */
export type GroupNotFound = (groupId: string) => ApiError;

export const groupNotFound =
  (status: 401 | 404): GroupNotFound =>
  (groupId) =>
    new ApiError('group_not_found', `Platform group ${groupId} not found.`, { status });

export const organizationNotFound: GroupNotFound = (groupId) =>
  new ApiError('organization_not_found', `Platform organization ${groupId} not found.`);
