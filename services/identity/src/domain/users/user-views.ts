/** The user objects of the API, with the earlier generation's aliases. */
import type { UserRow } from '../../entities/index.js';
import { userAnswerFields } from '@collab/shared';
import { columnOf, type UserKey } from './user-keys.js';

const ANSWERED = (Object.keys(userAnswerFields) as UserKey[]).map((key) => [key, columnOf(key)] as const);

/**
 * A user in GET /v1/users: every key the user requests take, in the answers' order, read from
 * the column it is stored in (null for a key stored nowhere), between the id and the creation time.
 */
export function userListItem(user: UserRow): { id: string } & Record<UserKey, unknown> & { createdTimestamp: string } {
  // Assigned in place (no entries array, no spread): a page builds 200 of these per request.
  const item: Record<string, unknown> = { id: user.externalId };
  for (const [key, column] of ANSWERED) item[key] = column === null ? null : user[column];
  item.createdTimestamp = user.createdAt.toISOString();
  return item as { id: string } & Record<UserKey, unknown> & { createdTimestamp: string };
}

export function userDetails(user: UserRow, groupIds: string[]) {
  return {
    ...userListItem(user),
    groups: groupIds,
    organizations: groupIds,
    // No chat profile can be linked here; the original's name beside the API document's.
    groupIDsWithLinkedChatProfile: [] as string[],
    groupIDsWithLinkedSlackProfile: [] as string[],
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
