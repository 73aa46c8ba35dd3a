/** The viewer of a client token and its scope (original-extras §4.2 steps 8–9, §4.3). */
import { ApiError } from '@collab/shared';
import { presenceRepository } from '../../repositories/presence.repository.js';
import type { IdentityContext } from '../context.js';

export interface ViewerScope {
  /** The viewer's internal id. */
  userId: string;
  /** Internal ids of the groups the viewer sees: the token's group, else all of the viewer's groups. */
  groupIds: string[];
}

/** Loads the viewer; a user or group that cannot be loaded is the original's `403 invalid_session`. */
export async function viewerScope(
  ctx: IdentityContext,
  applicationId: string,
  viewer: { userId: string; groupId: string | null },
): Promise<ViewerScope> {
  const row = await presenceRepository.viewer(ctx.db, applicationId, viewer.userId, viewer.groupId);
  if (!row || row.status === 'deleted')
    throw new ApiError('invalid_session', `Unable to load user ${viewer.userId} in application ${applicationId}. Perhaps the user is marked 'deleted'.`);
  if (viewer.groupId === null) return { userId: row.userId, groupIds: row.groupIds };
  if (!row.groupId) throw new ApiError('invalid_session', `Platform group ${viewer.groupId} not found.`);
  if (!row.groupIds.includes(String(row.groupId))) throw new ApiError('invalid_session', 'The user is not a member of the group.');
  if (row.groupStatus === 'deleted') throw new ApiError('invalid_session', 'The org could not be loaded or is inactive');
  return { userId: row.userId, groupIds: [String(row.groupId)] };
}
