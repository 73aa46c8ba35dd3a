/** The user objects of the API, with the earlier generation's aliases. */
import type { UserRow } from '../../entities/index.js';

export function userListItem(user: UserRow) {
  return {
    id: user.externalId,
    email: user.email,
    status: user.status,
    name: user.name,
    shortName: user.shortName,
    short_name: user.shortName,
    first_name: null,
    last_name: null,
    profilePictureURL: user.profilePictureUrl,
    profile_picture_url: user.profilePictureUrl,
    metadata: user.metadata,
    createdTimestamp: user.createdAt.toISOString(),
  };
}

export function userDetails(user: UserRow, groupIds: string[]) {
  return {
    ...userListItem(user),
    groups: groupIds,
    organizations: groupIds,
    groupIDsWithLinkedChatProfile: [] as string[],
  };
}

/** Earlier-generation user entries: `{id, name, email, first_name, last_name}`. */
export function legacyUser(user: UserRow) {
  return { id: user.externalId, name: user.name, email: user.email, first_name: null, last_name: null };
}

/** A group member entry. */
export function groupMemberEntry(user: UserRow) {
  return {
    id: user.externalId,
    name: user.name,
    email: user.email,
    shortName: user.shortName,
    createdTimestamp: user.createdAt.toISOString(),
    status: user.status,
    profilePictureURL: user.profilePictureUrl,
    metadata: user.metadata,
  };
}
