/** SQL of the client-token reads: users as the viewer may see them. Every method takes the application id first. */
import { rows, type Queryable } from '@collab/shared';
import type { UserRow } from '../entities/index.js';
import { usersTable } from './tables.js';

export const clientRepository = {
  /** The named users who are members of at least one of the groups (by external id). */
  async usersInGroups(db: Queryable, applicationId: string, groupIds: readonly string[], userIds: readonly string[]): Promise<UserRow[]> {
    if (groupIds.length === 0 || userIds.length === 0) return [];
    return rows<UserRow>(
      db,
      `SELECT ${usersTable.select} FROM identity.users u
       WHERE u.application_id = $1 AND u.external_id = ANY($3::text[]) AND EXISTS (
         SELECT 1 FROM identity.group_members m JOIN identity.groups g ON g.internal_id = m.group_id
         WHERE m.application_id = $1 AND m.user_id = u.internal_id AND g.external_id = ANY($2::text[]))`,
      [applicationId, groupIds, userIds],
    );
  },

  /** The first `limit` members of the group not marked deleted, by internal id. */
  async activeMembers(db: Queryable, applicationId: string, groupId: string, limit: number): Promise<UserRow[]> {
    return rows<UserRow>(
      db,
      `SELECT ${usersTable.select} FROM identity.users u
       JOIN identity.group_members m ON m.user_id = u.internal_id
       JOIN identity.groups g ON g.internal_id = m.group_id
       WHERE m.application_id = $1 AND g.application_id = $1 AND g.external_id = $2 AND u.status <> 'deleted'
       ORDER BY u.internal_id LIMIT $3`,
      [applicationId, groupId, limit],
    );
  },
};
