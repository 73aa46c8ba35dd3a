/**
 * Presence use cases (original-extras §1, decision 50): where users are within their groups.
 * Ephemeral presence is in Redis and expires unless renewed; durable presence is a row.
 */
import { ApiError, type FlatJson, type presenceRoutes, type RouteBody, type userLocationView, type ViewAnswer } from '@collab/shared';
import { groupsRepository } from '../../repositories/groups.repository.js';
import { durablePresenceRepository, locationKey, presenceScopeRepository } from '../../repositories/presence.repository.js';
import { usersRepository } from '../../repositories/users.repository.js';
import type { IdentityContext } from '../context.js';
import { countPresenceUpdate } from './metrics.js';

export type PresenceInput = RouteBody<typeof presenceRoutes.updatePresence>;

/** Every key/value of `matcher` is in `location`. */
function contains(location: FlatJson, matcher: FlatJson): boolean {
  return Object.entries(matcher).every(([key, value]) => location[key] === value);
}

/** PUT /v1/users/<ID>/presence, with the checks of §1.2 in their order (decision 50 for the group). */
export async function updatePresence(ctx: IdentityContext, applicationId: string, userId: string, input: PresenceInput): Promise<void> {
  const groupId = input.groupID ?? input.organizationID;
  if (groupId === undefined) throw new ApiError('missing_field', 'Missing required field: groupID.');
  const [user, group] = await Promise.all([
    usersRepository.find(ctx.db, applicationId, userId),
    groupsRepository.find(ctx.db, applicationId, groupId),
  ]);
  if (!user) throw new ApiError('user_not_found', `User ${userId} not found.`);
  if (!group) throw new ApiError('organization_not_found', `Group ${groupId} not found.`);
  if (!(await presenceScopeRepository.isMember(ctx.db, applicationId, group.internalId, user.internalId)))
    throw new ApiError('user_not_in_organization', `User ${userId} is not a member of group ${groupId}.`);
  if (input.durable && input.absent) throw new ApiError('invalid_request', 'Cannot remove durable presence');

  if (input.durable) {
    await durablePresenceRepository.upsert(ctx.db, applicationId, group.internalId, user.internalId, input.location);
  } else {
    const region = input.exclusiveWithin ?? input.location;
    if (input.absent) {
      await ctx.presence.clear(applicationId, group.internalId, user.internalId, locationKey(region), locationKey(input.location));
    } else {
      if (!contains(input.location, region))
        throw new ApiError('invalid_request', 'Cannot set a user present in a non-matching exclusivity region');
      await ctx.presence.set(applicationId, group.internalId, user.internalId, locationKey(region), locationKey(input.location));
    }
  }
  countPresenceUpdate(input.durable ? 'durable' : input.absent ? 'absent' : 'ephemeral');
}

export interface PresenceMatch {
  location: FlatJson;
  partial: boolean;
  excludeDurable: boolean;
}

/** One user's presence as the reads answer it. */
export type UserLocation = ViewAnswer<typeof userLocationView>;

/**
 * The presence of the members of the groups that matches (§1.4): users with ephemeral presence
 * first, then those with a durable record only. `onlyUserId` (internal) narrows it to one user.
 */
export async function readPresence(
  ctx: IdentityContext,
  applicationId: string,
  groupIds: readonly string[],
  match: PresenceMatch,
  onlyUserId?: string,
): Promise<UserLocation[]> {
  const wanted = locationKey(match.location);
  const matches = (text: string) => (match.partial ? contains(JSON.parse(text) as FlatJson, match.location) : text === wanted);
  const [members, ephemeral, durable] = await Promise.all([
    presenceScopeRepository.memberIds(ctx.db, applicationId, groupIds),
    ctx.presence.list(applicationId, groupIds),
    match.excludeDurable ? [] : durablePresenceRepository.latest(ctx.db, applicationId, groupIds, match, onlyUserId),
  ]);

  const byUser = new Map<string, UserLocation>();
  for (const groupId of groupIds) {
    const found = new Map<string, string[]>();
    for (const entry of ephemeral.get(groupId) ?? []) {
      // Only current members: a user removed from the group, or deleted, is seen no more.
      if (!members.has(entry.userId) || (onlyUserId !== undefined && entry.userId !== onlyUserId)) continue;
      if (!matches(entry.location)) continue;
      found.set(entry.userId, [...(found.get(entry.userId) ?? []), entry.location]);
    }
    for (const [userId, texts] of found) {
      const locations = texts.map((text) => JSON.parse(text) as FlatJson);
      locations.sort((a, b) => Object.keys(a).length - Object.keys(b).length || locationKey(a).localeCompare(locationKey(b)));
      const item = byUser.get(userId) ?? { id: members.get(userId)!, ephemeral: { locations: [] } };
      item.ephemeral.locations.push(...locations);
      byUser.set(userId, item);
    }
  }
  for (const record of durable) {
    const item = byUser.get(record.userId) ?? { id: record.externalUserId, ephemeral: { locations: [] } };
    item.durable = { location: record.location, timestamp: record.lastPresentAt.toISOString() };
    byUser.set(record.userId, item);
  }
  return [...byUser.values()];
}

/** GET /v1/users/<ID>/presence: the user's presence in every group of theirs. */
export async function getUserPresence(ctx: IdentityContext, applicationId: string, userId: string, match: PresenceMatch): Promise<UserLocation> {
  const user = await usersRepository.find(ctx.db, applicationId, userId);
  if (!user) throw new ApiError('user_not_found', `User ${userId} not found.`);
  const groups = await presenceScopeRepository.groupsOf(ctx.db, applicationId, user.internalId);
  const [item] = await readPresence(ctx, applicationId, groups.map((group) => group.internalId), match, user.internalId);
  return item ?? { id: user.externalId, ephemeral: { locations: [] } };
}

/**
 * Drops the ephemeral presence of what was deleted. The rows go with their user or group; the
 * Redis entries are unreadable at once (reads keep current members only) and expire by
 * themselves, so a Redis failure here is logged, not raised.
 */
export async function forgetPresence(
  ctx: IdentityContext,
  applicationId: string,
  what: { groupId: string } | { userId: string } | 'application',
): Promise<void> {
  try {
    if (what === 'application') await ctx.presence.forgetApplication(applicationId);
    else if ('groupId' in what) await ctx.presence.forgetGroup(applicationId, what.groupId);
    else await ctx.presence.forgetUser(applicationId, what.userId);
  } catch (error) {
    ctx.logger.warn({ err: (error as Error).message, applicationId }, 'ephemeral presence not removed; it expires by itself');
  }
}
