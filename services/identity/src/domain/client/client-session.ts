/**
 * The viewer of a client token (original-extras §4.2 steps 6–9, decision 53): applies the token's
 * `user_details` and `group_details`, then checks the user and the group. Every refusal is
 * `403 invalid_session`, with the reason.
 */
import { ApiError, identityRoutes, type Viewer } from '@collab/shared';
import { groupsRepository } from '../../repositories/groups.repository.js';
import { presenceScopeRepository } from '../../repositories/presence.repository.js';
import { usersRepository } from '../../repositories/users.repository.js';
import type { IdentityContext } from '../context.js';
import { upsertGroup } from '../groups/groups.js';
import { upsertUser } from '../users/users.js';

const refuse = (message: string) => new ApiError('invalid_session', message);

/** Parses details as the PUT route's body would be, naming the claim when they are not. */
function parseDetails<T>(parse: (value: unknown) => T, value: unknown, claim: string): T {
  try {
    return parse(value);
  } catch (error) {
    throw refuse(`${claim}: ${(error as Error).message}`);
  }
}

export interface ClientSessionRequest {
  userId: string;
  groupId: string | null;
  userDetails?: unknown;
  groupDetails?: unknown;
}

export async function clientSession(ctx: IdentityContext, applicationId: string, request: ClientSessionRequest): Promise<Viewer> {
  const { userId, groupId } = request;
  const writes = request.userDetails !== undefined || (groupId !== null && request.groupDetails !== undefined);
  try {
    if (request.userDetails !== undefined) {
      const details = parseDetails((value) => identityRoutes.upsertUser.body.parse(value), request.userDetails, 'user_details');
      await upsertUser(ctx, applicationId, userId, details, { earlierGeneration: false });
    }
    if (groupId !== null && request.groupDetails !== undefined) {
      const details = parseDetails((value) => identityRoutes.upsertGroup.body.parse(value), request.groupDetails, 'group_details');
      await upsertGroup(ctx, applicationId, groupId, details);
    }
    if (groupId !== null && (request.userDetails !== undefined || request.groupDetails !== undefined)) {
      if (await usersRepository.find(ctx.db, applicationId, userId))
        await upsertUser(ctx, applicationId, userId, { addGroups: [groupId] }, { earlierGeneration: false });
    }
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) throw refuse(error.message);
    throw error;
  } finally {
    // Also after a failure: a write before it may have committed.
    if (writes) await ctx.directoryChanged(applicationId);
  }

  const user = await usersRepository.find(ctx.db, applicationId, userId);
  if (!user || user.status === 'deleted')
    throw refuse(`Unable to load user ${userId} in application ${applicationId}. Perhaps the user is marked 'deleted'.`);
  if (groupId === null) {
    const groups = await presenceScopeRepository.groupsOf(ctx.db, applicationId, user.internalId);
    return { userId, groupId: null, groupIds: groups.map((group) => group.externalId) };
  }
  const group = await groupsRepository.find(ctx.db, applicationId, groupId);
  if (!group) throw refuse(`Platform group ${groupId} not found.`);
  if (!(await presenceScopeRepository.isMember(ctx.db, applicationId, group.internalId, user.internalId)))
    throw refuse('The user is not a member of the group.');
  if (group.status === 'deleted') throw refuse('The org could not be loaded or is inactive');
  return { userId, groupId, groupIds: [groupId] };
}

