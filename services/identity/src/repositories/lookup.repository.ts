/** Reads other services need from identity, answered in as few queries as possible. */
import type { Db } from './db.js';

export interface LookedUpUser {
  id: string;
  name: string | null;
  shortName: string | null;
  status: 'active' | 'deleted';
  profilePictureURL: string | null;
  metadata: Record<string, string | number | boolean>;
}

/**
 * The repository's statements, exported so that the bench's raw-SQL baselines issue the very
 * same text.
 */
export const lookupStatements = {
  /** The users among $2 (external ids). */
  users: `SELECT external_id AS id, name, short_name AS "shortName", status, profile_picture_url AS "profilePictureURL", metadata
       FROM identity.users
       WHERE application_id = $1 AND external_id = ANY($2::text[])`,
  /** The group $2, and which of the users $3 are its members. */
  groupWithMembers: `SELECT g.external_id AS id, g.status,
              COALESCE(array_agg(u.external_id) FILTER (WHERE u.external_id IS NOT NULL), '{}') AS "memberIds"
       FROM identity.groups g
       LEFT JOIN identity.group_members m ON m.group_id = g.internal_id
       LEFT JOIN identity.users u ON u.internal_id = m.user_id AND u.external_id = ANY($3::text[])
       WHERE g.application_id = $1 AND g.external_id = $2
       GROUP BY g.internal_id`,
};

export const lookupRepository = {
  async users(db: Db, applicationId: string, externalIds: readonly string[]): Promise<LookedUpUser[]> {
    if (externalIds.length === 0) return [];
    return db.query(
      lookupStatements.users,
      [applicationId, [...new Set(externalIds)]],
    );
  },

  /** The group, and which of the given users are its members. */
  async groupWithMembers(
    db: Db,
    applicationId: string,
    groupExternalId: string,
    userExternalIds: readonly string[],
  ): Promise<{ id: string; status: 'active' | 'deleted'; memberIds: string[] } | null> {
    const rows: { id: string; status: 'active' | 'deleted'; memberIds: string[] }[] = await db.query(
      lookupStatements.groupWithMembers,
      [applicationId, groupExternalId, [...new Set(userExternalIds)]],
    );
    return rows[0] ?? null;
  },
};
