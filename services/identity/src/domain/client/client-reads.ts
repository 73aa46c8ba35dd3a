/** The identity part of the client-token reads (original-extras §4.5): the viewer, users, group members, presence. */
import { ApiError, type Viewer } from '@collab/shared';
import type { UserRow } from '../../entities/index.js';
import { clientRepository } from '../../repositories/client.repository.js';
import { presenceScopeRepository } from '../../repositories/presence.repository.js';
import { usersRepository } from '../../repositories/users.repository.js';
import type { IdentityContext } from '../context.js';
import { getPreferences } from '../preferences/preferences.js';
import { readPresence, type PresenceMatch } from '../presence/presence.js';

/** Members listed per groupMembers answer, as the original. */
const GROUP_MEMBERS_PAGE = 10;

/** ClientUserData (§4.6): display names fall back on each other, then on "unknown". */
export function clientUser(user: UserRow) {
  return {
    id: user.externalId,
    name: user.name,
    shortName: user.shortName,
    displayName: user.shortName || user.name || 'unknown',
    secondaryDisplayName: user.name || user.shortName || 'Unknown',
    profilePictureURL: user.profilePictureUrl,
    metadata: user.metadata,
  };
}

export async function viewer(ctx: IdentityContext, applicationId: string, viewer: Viewer) {
  const user = await usersRepository.find(ctx.db, applicationId, viewer.userId);
  if (!user) throw new ApiError('user_not_found', `User ${viewer.userId} not found.`);
  const [groups, preferences] = await Promise.all([
    presenceScopeRepository.groupsOf(ctx.db, applicationId, user.internalId),
    getPreferences(ctx, applicationId, viewer.userId),
  ]);
  return {
    ...clientUser(user),
    organizationID: viewer.groupId,
    groupID: viewer.groupId,
    notificationPreferences: preferences.notification_channels,
    isSlackConnected: false,
    organizationIsSlackConnected: false,
    groupIsSlackConnected: false,
    groups: groups.map((group) => group.externalId),
  };
}

/** A user sharing a scope group with the viewer; any other is not found. */
export async function user(ctx: IdentityContext, applicationId: string, viewer: Viewer, userId: string) {
  const [found] = await clientRepository.usersInGroups(ctx.db, applicationId, viewer.groupIds, [userId]);
  if (!found) throw new ApiError('user_not_found', `User ${userId} not found.`);
  return clientUser(found);
}

/** Every requested id, mapped to its user or null when not visible to the viewer. */
export async function users(ctx: IdentityContext, applicationId: string, viewer: Viewer, userIds: string[]) {
  const found = await clientRepository.usersInGroups(ctx.db, applicationId, viewer.groupIds, userIds);
  const byId = new Map(found.map((row) => [row.externalId, clientUser(row)]));
  return Object.fromEntries(userIds.map((id) => [id, byId.get(id) ?? null]));
}

/** The first members of a group of the viewer; an unknown group or one not theirs has none. */
export async function groupMembers(ctx: IdentityContext, applicationId: string, viewer: Viewer, groupId: string) {
  const user = await usersRepository.find(ctx.db, applicationId, viewer.userId);
  const memberships = user ? await presenceScopeRepository.groupsOf(ctx.db, applicationId, user.internalId) : [];
  if (!memberships.some((group) => group.externalId === groupId)) return { groupMembers: [], loading: false as const, hasMore: false };
  const members = await clientRepository.activeMembers(ctx.db, applicationId, groupId, GROUP_MEMBERS_PAGE);
  return { groupMembers: members.map(clientUser), loading: false as const, hasMore: members.length === GROUP_MEMBERS_PAGE };
}

export async function presence(ctx: IdentityContext, applicationId: string, viewer: Viewer, match: PresenceMatch) {
  const groupIds = await presenceScopeRepository.internalIds(ctx.db, applicationId, viewer.groupIds);
  return readPresence(ctx, applicationId, groupIds, match);
}
