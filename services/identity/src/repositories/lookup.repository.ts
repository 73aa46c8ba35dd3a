/** Reads other services need from identity, answered in as few queries as possible. */
import { rows, type Queryable } from '@collab/shared';
import { groupsTable, usersTable } from './tables.js';

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
  /**
   * The lookup's whole answer as JSON text, in one statement: the users among $2 (external ids),
   * and the group $3 (none when null) with which of those users are its members.
   */
  lookup: `SELECT json_build_object(
       'users', (SELECT COALESCE(json_agg(found), '[]'::json) FROM (
         SELECT ${usersTable.as('externalId', 'id')}, ${usersTable.pick('name', 'shortName', 'status')},
                ${usersTable.as('profilePictureUrl', 'profilePictureURL')}, ${usersTable.pick('metadata')}
         FROM identity.users u
         WHERE u.application_id = $1 AND u.external_id = ANY($2::text[])) found),
       'group', (SELECT row_to_json(grouped) FROM (
         SELECT ${groupsTable.as('externalId', 'id')}, ${groupsTable.pick('status')},
                COALESCE(array_agg(u.external_id) FILTER (WHERE u.external_id IS NOT NULL), '{}') AS "memberIds"
         FROM identity.groups g
         LEFT JOIN identity.group_members m ON m.group_id = g.internal_id
         LEFT JOIN identity.users u ON u.internal_id = m.user_id AND u.external_id = ANY($2::text[])
         WHERE g.application_id = $1 AND g.external_id = $3
         GROUP BY g.internal_id) grouped)
     )::text AS answer`,
};

export const lookupRepository = {
  /**
   * The users and the group (null when not asked for or unknown) as the lookup's JSON text
   * (`{users: LookedUpUser[], group: {id, status, memberIds} | null}`): built by PostgreSQL and
   * passed through, never parsed into rows here.
   */
  async lookup(db: Queryable, applicationId: string, userExternalIds: readonly string[], groupExternalId: string | null): Promise<string> {
    const [row] = await rows<{ answer: string }>(db, lookupStatements.lookup, [applicationId, [...new Set(userExternalIds)], groupExternalId]);
    return row.answer;
  },
};
