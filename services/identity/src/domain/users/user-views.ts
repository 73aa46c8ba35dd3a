/** The user objects of the API, with the earlier generation's aliases. */
import { userAnswerFields, type groupMemberView, type legacyUserView, type userDetailsView, type userListItemView, type ViewAnswer } from '@collab/shared';
import type { UserRow } from '../../entities/index.js';
import { columnOf, type UserKey } from './user-keys.js';

/** The keys of a user answer between `id` and `createdTimestamp`, each with the column it is read from (null: none). */
export const USER_ANSWERED_KEYS = (Object.keys(userAnswerFields) as UserKey[]).map((key) => [key, columnOf(key)] as const);

/**
 * A user as the API answers it: every key the user requests take, in the answers' order, read from
 * the column it is stored in (null for a key stored nowhere), between the id and the creation time.
 * GET /v1/users has PostgreSQL write its page from the same keys (usersRepository.listPageJson).
 */
export function userListItem(user: UserRow): ViewAnswer<typeof userListItemView> {
  const item: Record<string, unknown> = { id: user.externalId };
  for (const [key, column] of USER_ANSWERED_KEYS) item[key] = column === null ? null : user[column];
  item.createdTimestamp = user.createdAt.toISOString();
  return item as ViewAnswer<typeof userListItemView>;
}

export function userDetails(user: UserRow, groupIds: string[]): ViewAnswer<typeof userDetailsView> {
  return {
    ...userListItem(user),
    groups: groupIds,
    organizations: groupIds,
    // No chat profile can be linked here; the original's name beside the API document's.
    groupIDsWithLinkedChatProfile: [],
    groupIDsWithLinkedSlackProfile: [],
  };
}

/** Earlier-generation user entries: `{id, name, email, first_name, last_name}`. */
export function legacyUser(user: UserRow): ViewAnswer<typeof legacyUserView> {
  return { id: user.externalId, name: user.name, email: user.email, first_name: null, last_name: null };
}

/** A group member entry. */
export function groupMemberEntry(user: UserRow): ViewAnswer<typeof groupMemberView> {
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
