/** Presence (original-extras §1, decision 50): set a user's presence in a group, read it back. */
import { ApiError, type Infer, type PresenceLocation, type presenceBody } from '@collab/shared';
import { presenceRepository } from '../../repositories/presence.repository.js';
import type { IdentityContext } from '../context.js';
import { viewerScope } from '../client/viewer.js';
import { locationJson } from './presence-store.js';

type PresenceUpdate = Infer<typeof presenceBody>;

/** Whether `location` has every key of `region` with the same value. */
function contains(location: PresenceLocation, region: PresenceLocation): boolean {
  return Object.entries(region).every(([key, value]) => location[key] === value);
}

/** Applies one update, with the checks of §1.2 rows 3–8 in their order (rows 1–2 are the route's). */
export async function updatePresence(ctx: IdentityContext, applicationId: string, userExternalId: string, update: PresenceUpdate): Promise<void> {
  const groupExternalId = update.groupID ?? update.organizationID;
  if (groupExternalId === undefined) throw new ApiError('missing_field', 'Missing field groupID: the group whose members see this presence.');
  const subjects = await presenceRepository.subjects(ctx.db, applicationId, userExternalId, groupExternalId);
  if (!subjects.userId) throw new ApiError('user_not_found', `User ${userExternalId} not found.`);
  if (!subjects.groupId) throw new ApiError('organization_not_found', `Group ${groupExternalId} not found.`);
  if (!subjects.member) throw new ApiError('user_not_in_organization', `User ${userExternalId} is not a member of group ${groupExternalId}.`);
  if (update.absent && update.durable) throw new ApiError('invalid_request', 'Cannot remove durable presence');

  const { location } = update;
  if (update.durable) {
    // exclusiveWithin is validated by the schema and otherwise ignored, as in the original.
    await presenceRepository.upsertDurable(ctx.db, applicationId, subjects.groupId, subjects.userId, locationJson(location), location);
    ctx.countPresenceUpdate('durable');
    return;
  }
  const region = update.exclusiveWithin ?? location;
  if (update.absent) {
    await ctx.presence.setAbsent(applicationId, subjects.groupId, subjects.userId, region, location);
    ctx.countPresenceUpdate('absent');
    return;
  }
  if (!contains(location, region)) throw new ApiError('invalid_request', 'Cannot set a user present in a non-matching exclusivity region');
  await ctx.presence.setPresent(applicationId, subjects.groupId, subjects.userId, region, location);
  ctx.countPresenceUpdate('ephemeral');
}

export interface PresenceQuery {
  location: PresenceLocation;
  partialMatch: boolean;
  excludeDurable: boolean;
}

/** Ephemeral locations per group: by number of keys, then by their JSON text (§1.4). */
function sortLocations(locations: PresenceLocation[]): PresenceLocation[] {
  return locations
    .map((location) => ({ location, keys: Object.keys(location).length, text: locationJson(location) }))
    .sort((a, b) => a.keys - b.keys || a.text.localeCompare(b.text))
    .map((entry) => entry.location);
}

/**
 * One user's presence matching the query across the groups they belong to (the server-token
 * read of decision 50): `[]` when neither part is present, else the one item of §1.4.
 */
export async function getUserPresence(ctx: IdentityContext, applicationId: string, userExternalId: string, query: PresenceQuery) {
  const user = await presenceRepository.userWithGroups(ctx.db, applicationId, userExternalId);
  if (!user) throw new ApiError('user_not_found', `User ${userExternalId} not found.`);
  const matches = (candidate: PresenceLocation) =>
    query.partialMatch ? contains(candidate, query.location) : locationJson(candidate) === locationJson(query.location);
  const perGroup = await ctx.presence.locations(applicationId, user.userId, user.groupIds);
  const locations = perGroup.flatMap((group) => sortLocations(group.filter(matches)));
  // Deleted-status users keep their ephemeral presence but have no durable one (§1.4).
  const durable =
    query.excludeDurable || user.status === 'deleted'
      ? null
      : await presenceRepository.latestDurable(ctx.db, applicationId, user.userId, user.groupIds, {
          location: query.location,
          locationKey: locationJson(query.location),
          partial: query.partialMatch,
        });
  if (locations.length === 0 && !durable) return [];
  return [
    {
      id: userExternalId,
      ephemeral: { locations },
      ...(durable ? { durable: { location: durable.location, timestamp: durable.lastPresentAt.toISOString() } } : {}),
    },
  ];
}

/**
 * Everyone's presence matching the query in the viewer's groups (GET /v1/client/presence, §1.4):
 * users with ephemeral presence first, then those with durable presence only.
 */
export async function getClientPresence(
  ctx: IdentityContext,
  applicationId: string,
  viewer: { userId: string; groupId: string | null },
  query: PresenceQuery,
) {
  const scope = await viewerScope(ctx, applicationId, viewer);
  const matches = (candidate: PresenceLocation) =>
    query.partialMatch ? contains(candidate, query.location) : locationJson(candidate) === locationJson(query.location);
  const members = await presenceRepository.members(ctx.db, applicationId, scope.groupIds);
  const perMember = await Promise.all(
    members.map(async (member) => (await ctx.presence.locations(applicationId, member.userId, [member.groupId]))[0].filter(matches)),
  );
  const ephemeral = new Map<string, PresenceLocation[]>();
  members.forEach((member, index) => {
    if (perMember[index].length === 0) return;
    ephemeral.set(member.externalId, [...(ephemeral.get(member.externalId) ?? []), ...sortLocations(perMember[index])]);
  });
  const durable = query.excludeDurable
    ? []
    : await presenceRepository.latestDurableOfActiveUsers(ctx.db, applicationId, scope.groupIds, {
        location: query.location,
        locationKey: locationJson(query.location),
        partial: query.partialMatch,
      });
  const durableOf = new Map(durable.map((row) => [row.externalId, { location: row.location, timestamp: row.lastPresentAt.toISOString() }]));
  const ids = [...ephemeral.keys(), ...[...durableOf.keys()].filter((id) => !ephemeral.has(id))];
  return ids.map((id) => ({
    id,
    ephemeral: { locations: ephemeral.get(id) ?? [] },
    ...(durableOf.has(id) ? { durable: durableOf.get(id)! } : {}),
  }));
}

/**
 * Drops the ephemeral presence of a deleted user, group or application (durable rows go with
 * their user or group by cascade). Entries are keyed by internal ids, never reused, so one left
 * behind when Redis is away can no longer be read and expires within PRESENCE_TTL_SECONDS: the
 * deletion does not fail for it.
 */
export async function forgetPresence(ctx: IdentityContext, applicationId: string, of: { userId?: string; groupId?: string }): Promise<void> {
  try {
    await ctx.presence.forget(applicationId, of);
  } catch (error) {
    ctx.logger.warn({ err: (error as Error).message, applicationId, ...of }, 'ephemeral presence not removed; it expires by itself');
  }
}
