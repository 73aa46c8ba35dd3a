/** Durable presence rows, and the lookups a presence update and read need. */
import type { Db } from './db.js';

type Location = Record<string, string | number | boolean>;

export interface PresenceSubjects {
  userId: string | null;
  groupId: string | null;
  member: boolean;
}

export interface DurablePresence {
  location: Location;
  lastPresentAt: Date;
}

export const presenceRepository = {
  /** The user and the group by external id (null when unknown), and whether the user is a member. */
  async subjects(db: Db, applicationId: string, userExternalId: string, groupExternalId: string): Promise<PresenceSubjects> {
    const rows: PresenceSubjects[] = await db.query(
      `SELECT u.internal_id AS "userId", g.internal_id AS "groupId",
              EXISTS (SELECT 1 FROM identity.group_members m WHERE m.group_id = g.internal_id AND m.user_id = u.internal_id) AS member
       FROM (SELECT 1) one
       LEFT JOIN identity.users u ON u.application_id = $1 AND u.external_id = $2
       LEFT JOIN identity.groups g ON g.application_id = $1 AND g.external_id = $3`,
      [applicationId, userExternalId, groupExternalId],
    );
    return rows[0];
  },

  /** The user (internal id, status) and the internal ids of its groups, in the order it joined them; null when unknown. */
  async userWithGroups(
    db: Db,
    applicationId: string,
    userExternalId: string,
  ): Promise<{ userId: string; status: 'active' | 'deleted'; groupIds: string[] } | null> {
    const rows: { userId: string; status: 'active' | 'deleted'; groupIds: string[] }[] = await db.query(
      `SELECT u.internal_id AS "userId", u.status,
              COALESCE(array_agg(m.group_id::text ORDER BY m.added_seq) FILTER (WHERE m.group_id IS NOT NULL), '{}') AS "groupIds"
       FROM identity.users u
       LEFT JOIN identity.group_members m ON m.user_id = u.internal_id
       WHERE u.application_id = $1 AND u.external_id = $2
       GROUP BY u.internal_id`,
      [applicationId, userExternalId],
    );
    return rows[0] ?? null;
  },

  /** Records the user present at the location now (insert or refresh). */
  async upsertDurable(db: Db, applicationId: string, groupId: string, userId: string, locationKey: string, location: Location): Promise<void> {
    await db.query(
      `INSERT INTO identity.durable_presence (application_id, group_id, user_id, location_key, location, last_present_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, now())
       ON CONFLICT (group_id, user_id, location_key) DO UPDATE SET last_present_at = excluded.last_present_at`,
      [applicationId, groupId, userId, locationKey, JSON.stringify(location)],
    );
  },

  /**
   * The user's most recent durable presence in the groups that matches the location: exactly
   * (same canonical JSON) or, with `partial`, every location containing it.
   */
  async latestDurable(
    db: Db,
    applicationId: string,
    userId: string,
    groupIds: readonly string[],
    match: { locationKey: string; location: Location; partial: boolean },
  ): Promise<DurablePresence | null> {
    if (groupIds.length === 0) return null;
    const condition = match.partial ? 'location @> $4::jsonb' : 'location_key = $4';
    const rows: DurablePresence[] = await db.query(
      `SELECT location, last_present_at AS "lastPresentAt"
       FROM identity.durable_presence
       WHERE application_id = $1 AND user_id = $2 AND group_id = ANY($3::bigint[]) AND ${condition}
       ORDER BY last_present_at DESC, location_key
       LIMIT 1`,
      [applicationId, userId, groupIds, match.partial ? JSON.stringify(match.location) : match.locationKey],
    );
    return rows[0] ?? null;
  },

  /**
   * A client token's viewer: the user and, when the token names one, the group with whether the
   * user is in it; `groupIds` are every group the user belongs to, in the order it joined them.
   */
  async viewer(
    db: Db,
    applicationId: string,
    userExternalId: string,
    groupExternalId: string | null,
  ): Promise<ViewerRow | null> {
    const rows: ViewerRow[] = await db.query(
      `SELECT u.internal_id AS "userId", u.status,
              g.internal_id AS "groupId", g.status AS "groupStatus",
              COALESCE(array_agg(m.group_id::text ORDER BY m.added_seq) FILTER (WHERE m.group_id IS NOT NULL), '{}') AS "groupIds"
       FROM identity.users u
       LEFT JOIN identity.groups g ON g.application_id = $1 AND g.external_id = $3
       LEFT JOIN identity.group_members m ON m.user_id = u.internal_id
       WHERE u.application_id = $1 AND u.external_id = $2
       GROUP BY u.internal_id, g.internal_id`,
      [applicationId, userExternalId, groupExternalId],
    );
    return rows[0] ?? null;
  },

  /** The members of the groups, one row per (group, member), groups in the order given. */
  async members(db: Db, applicationId: string, groupIds: readonly string[]): Promise<{ groupId: string; userId: string; externalId: string; status: 'active' | 'deleted' }[]> {
    if (groupIds.length === 0) return [];
    return db.query(
      `SELECT m.group_id::text AS "groupId", u.internal_id::text AS "userId", u.external_id AS "externalId", u.status
       FROM identity.group_members m JOIN identity.users u ON u.internal_id = m.user_id
       WHERE m.application_id = $1 AND m.group_id = ANY($2::bigint[])
       ORDER BY array_position($2::bigint[], m.group_id), m.added_seq`,
      [applicationId, groupIds],
    );
  },

  /** Each active user's most recent durable presence in the groups matching the location. */
  async latestDurableOfActiveUsers(
    db: Db,
    applicationId: string,
    groupIds: readonly string[],
    match: { locationKey: string; location: Location; partial: boolean },
  ): Promise<(DurablePresence & { externalId: string })[]> {
    if (groupIds.length === 0) return [];
    const condition = match.partial ? 'p.location @> $3::jsonb' : 'p.location_key = $3';
    return db.query(
      `SELECT DISTINCT ON (p.user_id) u.external_id AS "externalId", p.location, p.last_present_at AS "lastPresentAt"
       FROM identity.durable_presence p JOIN identity.users u ON u.internal_id = p.user_id
       WHERE p.application_id = $1 AND p.group_id = ANY($2::bigint[]) AND ${condition} AND u.status <> 'deleted'
       ORDER BY p.user_id, p.last_present_at DESC, p.location_key`,
      [applicationId, groupIds, match.partial ? JSON.stringify(match.location) : match.locationKey],
    );
  },

  /** The users among the IDs who belong to at least one of the groups. */
  async usersInGroups(db: Db, applicationId: string, externalIds: readonly string[], groupIds: readonly string[]): Promise<ClientUserRow[]> {
    if (externalIds.length === 0 || groupIds.length === 0) return [];
    return db.query(
      `SELECT ${CLIENT_USER_COLUMNS} FROM identity.users u
       WHERE u.application_id = $1 AND u.external_id = ANY($2::text[])
         AND EXISTS (SELECT 1 FROM identity.group_members m WHERE m.user_id = u.internal_id AND m.group_id = ANY($3::bigint[]))`,
      [applicationId, [...new Set(externalIds)], groupIds],
    );
  },

  /** The first `limit` members of the group whose status is not deleted, by internal id. */
  async activeMembers(db: Db, applicationId: string, groupId: string, limit: number): Promise<ClientUserRow[]> {
    return db.query(
      `SELECT ${CLIENT_USER_COLUMNS} FROM identity.group_members m JOIN identity.users u ON u.internal_id = m.user_id
       WHERE m.application_id = $1 AND m.group_id = $2 AND u.status <> 'deleted'
       ORDER BY u.internal_id LIMIT $3`,
      [applicationId, groupId, limit],
    );
  },

  /** The group's internal id by external id, when the user belongs to it. */
  async groupOfMember(db: Db, applicationId: string, groupExternalId: string, userId: string): Promise<string | null> {
    const rows: { groupId: string }[] = await db.query(
      `SELECT g.internal_id::text AS "groupId" FROM identity.groups g
       JOIN identity.group_members m ON m.group_id = g.internal_id AND m.user_id = $3
       WHERE g.application_id = $1 AND g.external_id = $2`,
      [applicationId, groupExternalId, userId],
    );
    return rows[0]?.groupId ?? null;
  },
};

const CLIENT_USER_COLUMNS = `u.external_id AS "externalId", u.name, u.short_name AS "shortName", u.profile_picture_url AS "profilePictureUrl", u.metadata`;

export interface ClientUserRow {
  externalId: string;
  name: string | null;
  shortName: string | null;
  profilePictureUrl: string | null;
  metadata: Location;
}

export interface ViewerRow {
  userId: string;
  status: 'active' | 'deleted';
  groupId: string | null;
  groupStatus: 'active' | 'deleted' | null;
  groupIds: string[];
}
