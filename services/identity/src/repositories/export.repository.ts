/**
 * All SQL of exporting identity's part of a customer dump: the customer, its applications, and
 * one page at a time (keyset on internal ids) of an application's users, groups and memberships.
 * Keys and JSON columns travel as text, as the dump writes them.
 */
import { rows, type Queryable } from '@collab/shared';
import type { ApplicationRow, GroupRow, UserRow } from '../entities/index.js';
import { applicationsTable, groupsTable, membersTable, usersTable } from './tables.js';

export const exportRepository = {
  async applications(db: Queryable, customerId: string): Promise<ApplicationRow[]> {
    return rows<ApplicationRow>(
      db,
      `SELECT ${applicationsTable.select} FROM identity.applications a WHERE a.customer_id = $1 ORDER BY a.created_at, a.id`,
      [customerId],
    );
  },

  async users(db: Queryable, applicationId: string, after: string, limit: number) {
    return rows<Pick<UserRow, 'externalId' | 'name' | 'email' | 'shortName' | 'profilePictureUrl' | 'status' | 'createdAt'> & { internalId: string; metadata: string }>(
      db,
      `SELECT ${usersTable.text('internalId')}, ${usersTable.pick('externalId', 'name', 'email', 'shortName', 'profilePictureUrl', 'status')},
         ${usersTable.text('metadata')}, ${usersTable.pick('createdAt')}
       FROM identity.users u WHERE u.application_id = $1 AND u.internal_id > $2 ORDER BY u.internal_id LIMIT $3`,
      [applicationId, after, limit],
    );
  },

  async groups(db: Queryable, applicationId: string, after: string, limit: number) {
    return rows<Pick<GroupRow, 'externalId' | 'name' | 'status' | 'createdAt'> & { internalId: string; metadata: string }>(
      db,
      `SELECT ${groupsTable.text('internalId')}, ${groupsTable.pick('externalId', 'name', 'status')}, ${groupsTable.text('metadata')}, ${groupsTable.pick('createdAt')}
       FROM identity.groups g WHERE g.application_id = $1 AND g.internal_id > $2 ORDER BY g.internal_id LIMIT $3`,
      [applicationId, after, limit],
    );
  },

  /** In the order members were added, which the groups' member lists follow. */
  async memberships(db: Queryable, applicationId: string, after: string, limit: number) {
    return rows<{ seq: string; userId: string; groupId: string }>(
      db,
      `SELECT ${membersTable.text('addedSeq', 'seq')}, ${usersTable.as('externalId', 'userId')}, ${groupsTable.as('externalId', 'groupId')}
       FROM identity.group_members m
       JOIN identity.users u ON u.internal_id = m.user_id
       JOIN identity.groups g ON g.internal_id = m.group_id
       WHERE m.application_id = $1 AND m.added_seq > $2 ORDER BY m.added_seq LIMIT $3`,
      [applicationId, after, limit],
    );
  },
};
