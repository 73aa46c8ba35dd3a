/** User use cases. */
import { ApiError, JsonText, pageCursors, type CursorOf, type FlatJson, type Queryable } from '@collab/shared';
import { groupsRepository } from '../../repositories/groups.repository.js';
import { usersRepository, type UserFields } from '../../repositories/users.repository.js';
import { recordDeletion } from '../events/outbox.js';
import type { IdentityContext } from '../context.js';
import { forgetPresence } from '../presence/presence.js';
import { COLUMN_KEYS, type UserInput } from './user-keys.js';
import { legacyUser, USER_ANSWERED_KEYS, userDetails } from './user-views.js';

export type { UserInput } from './user-keys.js';

/** Keys only the earlier generation uses; their presence makes a PUT earlier-generation. */
export const EARLIER_GENERATION_KEYS = ['short_name', 'profile_picture_url', 'first_name', 'last_name'] as const;

/**
 * Stored fields from the input: absent stays unchanged, null clears, an empty e-mail is absent.
 * A column named by several keys (a field and its aliases) takes the first non-null value given,
 * in the request schema's order (camelCase before snake_case), and null only when no key gives
 * a value.
 */
export function userFieldsFrom(input: UserInput): UserFields {
  // Compiles only while the request schema and the column map agree on the fields both name.
  const given: Record<string, unknown> & Partial<Pick<UserFields, keyof UserInput & keyof UserFields>> = input;
  const fields: Record<string, unknown> = {};
  for (const [column, keys] of COLUMN_KEYS) {
    const values = keys.map((key) => given[key]).filter((value) => value !== undefined);
    const value = values.find((candidate) => candidate !== null) ?? values[0];
    if (value !== undefined) fields[column] = value;
  }
  if (fields.email === '') delete fields.email;
  return fields as UserFields;
}

async function groupIdsOrFail(db: Queryable, applicationId: string, groupIds: readonly string[]): Promise<string[]> {
  const known = await groupsRepository.internalIds(db, applicationId, groupIds);
  const unknown = groupIds.find((id) => !known.has(id));
  if (unknown !== undefined) throw new ApiError('group_not_found', `Group ${unknown} not found.`, { status: 401 });
  return groupIds.map((id) => known.get(id)!);
}

/**
 * Creates or updates the user, then joins and leaves groups, all or nothing. The earlier
 * generation requires `email` to create.
 */
export async function upsertUser(
  ctx: IdentityContext,
  applicationId: string,
  userId: string,
  input: UserInput,
  options: { earlierGeneration: boolean },
): Promise<'created' | 'updated'> {
  const addGroups = input.addGroups ?? [];
  const removeGroups = input.removeGroups ?? [];
  const removing = new Set(removeGroups);
  if (addGroups.some((id) => removing.has(id)))
    throw new ApiError('invalid_field', 'Adding and removing the same group is invalid.');
  const fields = userFieldsFrom(input);

  // The earlier generation creates a user only with an email; without one it only updates.
  const write = async (db: Queryable) => {
    const written = await usersRepository.upsert(db, applicationId, userId, fields, { create: !options.earlierGeneration || Boolean(fields.email) });
    if (!written) throw new ApiError('missing_field', 'Missing required field: email.');
    return written;
  };
  const outcome = (written: { created: boolean }) => (written.created ? ('created' as const) : ('updated' as const));
  // No membership to change: the user's one statement is the whole write.
  if (addGroups.length === 0 && removeGroups.length === 0) return outcome(await write(ctx.db));

  return ctx.db.transaction(async (tx) => {
    const written = await write(tx);
    const joinIds = await groupIdsOrFail(tx, applicationId, addGroups);
    const leaveIds = await groupIdsOrFail(tx, applicationId, removeGroups);
    for (const groupId of joinIds) await groupsRepository.addMembers(tx, applicationId, groupId, [written.internalId]);
    for (const groupId of leaveIds) await groupsRepository.removeMembers(tx, applicationId, groupId, [written.internalId]);
    return outcome(written);
  });
}

/** Legacy POST /v1/users: creates, and fails with 409 when the id exists. */
export async function createUser(ctx: IdentityContext, applicationId: string, userId: string, input: UserInput) {
  const created = await usersRepository.insertIfAbsent(ctx.db, applicationId, userId, userFieldsFrom(input));
  if (!created) throw new ApiError('user_already_exists', `The platform user with id ${userId} already exists.`);
}

export async function listUsers(
  ctx: IdentityContext,
  applicationId: string,
  page: { limit: number; token: CursorOf<typeof pageCursors.users> | null; metadata?: FlatJson; search?: string },
) {
  const afterExternalId = page.token?.externalID ?? null;
  const [users, total] = await Promise.all([
    page.limit === 0
      ? { items: '[]', lastId: null, more: false }
      : usersRepository.listPageJson(ctx.db, applicationId, { afterExternalId, limit: page.limit, metadata: page.metadata, search: page.search }, USER_ANSWERED_KEYS),
    usersRepository.count(ctx.db, applicationId, page.metadata, page.search),
  ]);
  // The page of users comes as JSON text from PostgreSQL (a list of 200 built and serialised in
  // Node was most of the request's CPU); the answer around it is written here.
  const token = users.more && users.lastId !== null ? pageCursors.users.encode({ externalID: users.lastId }) : null;
  return new JsonText(`{"users":${users.items},"pagination":${JSON.stringify({ token, total })}}`);
}

/** The earlier generation's list: every user, a bare array. */
export async function listAllUsersLegacy(ctx: IdentityContext, applicationId: string) {
  const users = [];
  let after: string | null = null;
  for (;;) {
    const rows = await usersRepository.listPage(ctx.db, applicationId, { afterExternalId: after, limit: 1000 });
    users.push(...rows.map(legacyUser));
    if (rows.length < 1000) return users;
    after = rows[rows.length - 1].externalId;
  }
}

function userNotFound(userId: string): ApiError {
  return new ApiError('user_not_found', `Platform user ${userId} not found.`);
}

export async function getUser(ctx: IdentityContext, applicationId: string, userId: string) {
  const user = await usersRepository.findWithGroupIds(ctx.db, applicationId, userId);
  if (!user) throw userNotFound(userId);
  return userDetails(user, user.groupIds);
}

/**
 * Deletes the user and their memberships, and carries the deletion into the other services as
 * deleteGroup does (same transaction, then at once). Returns the ids of the user's files that
 * could not be deleted: none, since files are purged by jobs of their own.
 */
export async function deleteUser(ctx: IdentityContext, applicationId: string, userId: string, requestId: string): Promise<string[]> {
  const deletion = await ctx.db.transaction(async (tx) => {
    const user = await usersRepository.find(tx, applicationId, userId, true);
    if (!user) throw userNotFound(userId);
    await usersRepository.delete(tx, applicationId, user.internalId);
    const id = await recordDeletion(tx, { topic: 'user.deleted', applicationId, requestId, payload: { userId } });
    return { id, internalId: user.internalId };
  });
  await forgetPresence(ctx, applicationId, { userId: deletion.internalId });
  await ctx.deletions.processNow(deletion.id);
  return [];
}
