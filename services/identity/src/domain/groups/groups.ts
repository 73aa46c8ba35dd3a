/** Group use cases, shared by /v1/groups and /v1/organizations. */
import { ApiError, pageCursors, type CursorOf, type identityRoutes, type RouteBody, type Queryable } from '@collab/shared';
import type { GroupRow } from '../../entities/index.js';
import { recordDeletion } from '../events/outbox.js';
import { groupsRepository } from '../../repositories/groups.repository.js';
import type { IdentityContext } from '../context.js';
import { forgetPresence } from '../presence/presence.js';
import { usersNotFound, type GroupNotFound } from '../not-found.js';
import { groupDetails, groupListItem } from './group-views.js';
import { groupMemberEntry } from '../users/user-views.js';

/** PUT /v1/groups/<ID> body after validation. */
export type GroupInput = RouteBody<typeof identityRoutes.upsertGroup>;

/**
 * Internal ids of the given users, in order, locked against deletion and concurrent user writes
 * until the transaction ends; any unknown id fails with `401 user_not_found`. Call it before
 * writing any membership (see `groupsRepository.lockUsers`).
 */
async function lockMembers(db: Queryable, applicationId: string, externalIds: readonly string[]): Promise<string[]> {
  const known = await groupsRepository.lockUsers(db, applicationId, externalIds);
  const unknown = [...new Set(externalIds.filter((id) => !known.has(id)))];
  if (unknown.length > 0) throw usersNotFound(unknown);
  return externalIds.map((id) => known.get(id)!);
}

async function requireGroup(db: Queryable, applicationId: string, groupId: string, notFound: GroupNotFound, forUpdate = false) {
  const group = await groupsRepository.find(db, applicationId, groupId, forUpdate);
  if (!group) throw notFound(groupId);
  return group;
}

/**
 * Creates the group (name required) or updates only the provided fields; `members` replaces the
 * membership exactly. All or nothing. Concurrent creators of one new id: one creates, the others
 * update.
 */
export async function upsertGroup(
  ctx: IdentityContext,
  applicationId: string,
  groupId: string,
  input: GroupInput,
): Promise<'created' | 'updated'> {
  return ctx.db.transaction(async (tx) => {
    let group = await groupsRepository.find(tx, applicationId, groupId, true);
    let outcome: 'created' | 'updated' = 'updated';
    if (!group) {
      if (!input.name)
        throw new ApiError('missing_field', 'Group does not exist, "name" is a required field to create a new group.');
      group = await groupsRepository.insertIfAbsent(tx, applicationId, groupId, {
        name: input.name,
        status: input.status ?? 'active',
        metadata: input.metadata ?? {},
      });
      if (group) outcome = 'created';
      else group = await requireGroup(tx, applicationId, groupId, () => new ApiError('error'), true);
    }
    if (outcome === 'updated') {
      await groupsRepository.update(tx, applicationId, group.internalId, {
        ...(input.name !== undefined && { name: input.name }),
        ...(input.status !== undefined && { status: input.status }),
        ...(input.metadata !== undefined && { metadata: input.metadata }),
      });
    }
    if (input.members) {
      const userIds = await lockMembers(tx, applicationId, input.members);
      await groupsRepository.replaceMembers(tx, applicationId, group.internalId, userIds);
    }
    return outcome;
  });
}

/** Legacy POST /v1/organizations: creates, and fails with 409 when the id exists. */
export async function createGroup(ctx: IdentityContext, applicationId: string, groupId: string, input: GroupInput) {
  await ctx.db.transaction(async (tx) => {
    const group = await groupsRepository.insertIfAbsent(tx, applicationId, groupId, {
      name: input.name ?? '',
      status: input.status ?? 'active',
      metadata: input.metadata ?? {},
    });
    if (!group)
      throw new ApiError('organization_already_exists', `The organization with id ${groupId} already exists.`);
    if (input.members)
      await groupsRepository.addMembers(tx, applicationId, group.internalId, await lockMembers(tx, applicationId, input.members));
  });
}

export async function assertGroupExists(ctx: IdentityContext, applicationId: string, groupId: string, notFound: GroupNotFound) {
  await requireGroup(ctx.db, applicationId, groupId, notFound);
}

/** Adds and removes members; every id in either list must be a user of the application. */
export async function updateGroupMembers(
  ctx: IdentityContext,
  applicationId: string,
  groupId: string,
  change: { add?: string[]; remove?: string[] },
  notFound: GroupNotFound,
): Promise<GroupRow> {
  const add = change.add ?? [];
  const remove = change.remove ?? [];
  const removing = new Set(remove);
  const conflict = add.find((id) => removing.has(id));
  if (conflict !== undefined) throw new ApiError('invalid_field', `Platform member ${conflict} both added and removed.`);
  return ctx.db.transaction(async (tx) => {
    const group = await requireGroup(tx, applicationId, groupId, notFound, true);
    const [addIds, removeIds] = [
      await lockMembers(tx, applicationId, add),
      await lockMembers(tx, applicationId, remove),
    ];
    await groupsRepository.addMembers(tx, applicationId, group.internalId, addIds);
    await groupsRepository.removeMembers(tx, applicationId, group.internalId, removeIds);
    return group;
  });
}

export async function listGroups(ctx: IdentityContext, applicationId: string) {
  return (await groupsRepository.list(ctx.db, applicationId)).map(groupListItem);
}

/** One page of groups in the order listGroups answers them, with the count of all. */
export async function listGroupsPage(
  ctx: IdentityContext,
  applicationId: string,
  page: { limit: number; token: CursorOf<typeof pageCursors.groups> | null },
) {
  const afterInternalId = page.token?.internalID ?? null;
  const [{ rows, token }, total] = await Promise.all([
    pageCursors.groups.page(
      page.limit,
      (limit) => groupsRepository.listPage(ctx.db, applicationId, { afterInternalId, limit }),
      (last) => ({ internalID: last.internalId }),
    ),
    groupsRepository.count(ctx.db, applicationId),
  ]);
  return { groups: rows.map(groupListItem), nextToken: token, total };
}

export async function getGroup(ctx: IdentityContext, applicationId: string, groupId: string, notFound: GroupNotFound) {
  const group = await requireGroup(ctx.db, applicationId, groupId, notFound);
  const members = await groupsRepository.members(ctx.db, applicationId, group.internalId);
  return groupDetails(
    group,
    members.map((member) => member.externalId),
  );
}

/** Members after a change, as the earlier generation answers them. */
export async function groupMembers(ctx: IdentityContext, applicationId: string, group: GroupRow) {
  return groupsRepository.members(ctx.db, applicationId, group.internalId);
}

/** One page of members, by internal user id. */
export async function listGroupMembers(
  ctx: IdentityContext,
  applicationId: string,
  groupId: string,
  page: { limit: number; token: CursorOf<typeof pageCursors.groupMembers> | null },
  notFound: GroupNotFound,
) {
  const group = await requireGroup(ctx.db, applicationId, groupId, notFound);
  const afterUserId = page.token?.userID ?? null;
  const [{ rows, token }, total] = await Promise.all([
    pageCursors.groupMembers.page(
      page.limit,
      (limit) => groupsRepository.membersPage(ctx.db, applicationId, group.internalId, { afterUserId, limit }),
      (last) => ({ userID: last.internalId, externalID: last.externalId }),
    ),
    groupsRepository.countMembers(ctx.db, applicationId, group.internalId),
  ]);
  return { users: rows.map(groupMemberEntry), pagination: { token, total } };
}

/**
 * Deletes the group and its memberships, and records the deletion for the other services in the
 * same transaction; then carries it into them at once, so that the answer comes once its threads
 * and messages cannot be read. A service that cannot be reached makes it a 503; the identity
 * worker's relay finishes the deletion once the service is back.
 */
export async function deleteGroup(
  ctx: IdentityContext,
  applicationId: string,
  groupId: string,
  notFound: GroupNotFound,
  requestId: string,
): Promise<void> {
  const deletion = await ctx.db.transaction(async (tx) => {
    const group = await requireGroup(tx, applicationId, groupId, notFound, true);
    await groupsRepository.delete(tx, applicationId, group.internalId);
    const id = await recordDeletion(tx, { topic: 'group.deleted', applicationId, requestId, payload: { groupId } });
    return { id, internalId: group.internalId };
  });
  await forgetPresence(ctx, applicationId, { groupId: deletion.internalId });
  await ctx.deletions.processNow(deletion.id);
}
