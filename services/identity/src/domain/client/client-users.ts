/** Users as a client token's viewer sees them (original-extras §4.5, §4.6). */
import { ApiError } from '@collab/shared';
import { presenceRepository, type ClientUserRow } from '../../repositories/presence.repository.js';
import type { IdentityContext } from '../context.js';
import { viewerScope } from './viewer.js';

type Viewer = { userId: string; groupId: string | null };

/** Members a groupMembers read answers at most (the original's first page). */
const GROUP_MEMBERS_PAGE = 10;

/** ClientUserData: the display names fall back as the browser SDK's do. */
function clientUser(row: ClientUserRow) {
  return {
    id: row.externalId,
    name: row.name,
    shortName: row.shortName,
    displayName: row.shortName || row.name || 'unknown',
    secondaryDisplayName: row.name || row.shortName || 'Unknown',
    profilePictureURL: row.profilePictureUrl,
    metadata: row.metadata,
  };
}

/** A user sharing a scope group with the viewer (any status), else `401 user_not_found`. */
export async function getClientUser(ctx: IdentityContext, applicationId: string, viewer: Viewer, userExternalId: string) {
  const scope = await viewerScope(ctx, applicationId, viewer);
  const [row] = await presenceRepository.usersInGroups(ctx.db, applicationId, [userExternalId], scope.groupIds);
  if (!row) throw new ApiError('user_not_found', `User ${userExternalId} not found.`);
  return clientUser(row);
}

/** Every requested ID mapped to its user, or null when unknown or outside the viewer's groups. */
export async function getClientUsers(ctx: IdentityContext, applicationId: string, viewer: Viewer, userExternalIds: string[]) {
  const scope = await viewerScope(ctx, applicationId, viewer);
  const rows = await presenceRepository.usersInGroups(ctx.db, applicationId, userExternalIds, scope.groupIds);
  const found = new Map(rows.map((row) => [row.externalId, clientUser(row)]));
  return Object.fromEntries(userExternalIds.map((id) => [id, found.get(id) ?? null]));
}

/**
 * The first active members of a group the viewer belongs to; any other group answers empty.
 * `hasMore` is true when a full page came back, as in the original.
 */
export async function getClientGroupMembers(ctx: IdentityContext, applicationId: string, viewer: Viewer, groupExternalId: string) {
  const scope = await viewerScope(ctx, applicationId, viewer);
  const groupId = await presenceRepository.groupOfMember(ctx.db, applicationId, groupExternalId, scope.userId);
  if (!groupId) return { groupMembers: [], loading: false as const, hasMore: false };
  const rows = await presenceRepository.activeMembers(ctx.db, applicationId, groupId, GROUP_MEMBERS_PAGE);
  return { groupMembers: rows.map(clientUser), loading: false as const, hasMore: rows.length === GROUP_MEMBERS_PAGE };
}
