/** All SQL about groups and memberships. Every method takes the application id first. */
import { rows, type Queryable } from '@collab/shared';
import type { GroupRow, UserRow } from '../entities/index.js';
import { groupsTable, usersTable } from './tables.js';

/** What a write of a group may set: everything but its ids and creation time. */
export type GroupFields = Partial<Omit<GroupRow, 'internalId' | 'applicationId' | 'externalId' | 'createdAt'>>;

export const groupsRepository = {
  /**
   * `forUpdate` locks the row FOR NO KEY UPDATE: writers of one group queue up, while a
   * concurrent membership insert from the user side (whose foreign-key check takes FOR KEY SHARE
   * on the group) is not blocked by it, so the two cannot deadlock.
   */
  async find(db: Queryable, applicationId: string, externalId: string, forUpdate = false): Promise<GroupRow | null> {
    const [row] = await rows<GroupRow>(
      db,
      `SELECT ${groupsTable.select} FROM identity.groups g WHERE g.application_id = $1 AND g.external_id = $2${forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
      [applicationId, externalId],
    );
    return row ?? null;
  },

  /**
   * Internal ids of the given users of the application, each locked FOR KEY SHARE (in id order)
   * so that none can be deleted, and no in-flight write of that user is still running, before
   * memberships referencing them are inserted. Taking these locks before writing any membership
   * is what keeps a group write and a concurrent user write (which locks its user row first and
   * then inserts memberships) from deadlocking. Unknown ids are missing from the map.
   */
  async lockUsers(db: Queryable, applicationId: string, externalIds: readonly string[]): Promise<Map<string, string>> {
    if (externalIds.length === 0) return new Map();
    const found = await rows<{ externalId: string; internalId: string }>(
      db,
      `SELECT ${usersTable.pick('externalId', 'internalId')} FROM identity.users u
       WHERE u.application_id = $1 AND u.external_id = ANY($2::text[])
       ORDER BY u.internal_id FOR KEY SHARE`,
      [applicationId, [...new Set(externalIds)]],
    );
    return new Map(found.map((row) => [row.externalId, row.internalId]));
  },

  /**
   * Internal ids of the given groups, each locked FOR KEY SHARE (in id order) until the
   * transaction ends: a caller that is about to insert memberships (PUT /v1/users addGroups) then
   * either sees a group that cannot be deleted before it commits, or, after a concurrent DELETE
   * committed, does not see it at all; never a group that disappears under its insert, and no
   * deadlock, since every writer takes its locks in id order. FOR KEY SHARE does not conflict with the FOR NO KEY UPDATE of `find`.
   */
  async internalIds(db: Queryable, applicationId: string, externalIds: readonly string[]): Promise<Map<string, string>> {
    if (externalIds.length === 0) return new Map();
    const found = await rows<{ externalId: string; internalId: string }>(
      db,
      `SELECT ${groupsTable.pick('externalId', 'internalId')} FROM identity.groups g
       WHERE g.application_id = $1 AND g.external_id = ANY($2::text[])
       ORDER BY g.internal_id FOR KEY SHARE`,
      [applicationId, [...new Set(externalIds)]],
    );
    return new Map(found.map((row) => [row.externalId, row.internalId]));
  },

  async insertIfAbsent(db: Queryable, applicationId: string, externalId: string, fields: GroupFields): Promise<GroupRow | null> {
    const params: unknown[] = [applicationId, externalId];
    const written = groupsTable.write(fields, params);
    const [row] = await rows<GroupRow>(
      db,
      `INSERT INTO identity.groups AS g (${['application_id', 'external_id', ...written.columns].join(', ')})
       VALUES (${['$1', '$2', ...written.placeholders].join(', ')})
       ON CONFLICT (application_id, external_id) DO NOTHING
       RETURNING ${groupsTable.select}`,
      params,
    );
    return row ?? null;
  },

  async update(db: Queryable, applicationId: string, internalId: string, fields: GroupFields): Promise<void> {
    const params: unknown[] = [applicationId, internalId];
    const { set } = groupsTable.write(fields, params);
    if (!set) return;
    await db.query(`UPDATE identity.groups SET ${set} WHERE application_id = $1 AND internal_id = $2`, params);
  },

  async list(db: Queryable, applicationId: string): Promise<GroupRow[]> {
    return rows<GroupRow>(db, `SELECT ${groupsTable.select} FROM identity.groups g WHERE g.application_id = $1 ORDER BY g.internal_id`, [
      applicationId,
    ]);
  },

  /** One page in creation order (internal id), after `afterInternalId`. */
  async listPage(db: Queryable, applicationId: string, page: { afterInternalId: string | null; limit: number }): Promise<GroupRow[]> {
    return rows<GroupRow>(
      db,
      `SELECT ${groupsTable.select} FROM identity.groups g WHERE g.application_id = $1 AND ($2::bigint IS NULL OR g.internal_id > $2::bigint)
       ORDER BY g.internal_id LIMIT $3`,
      [applicationId, page.afterInternalId, page.limit],
    );
  },

  async count(db: Queryable, applicationId: string): Promise<number> {
    const [row] = await rows<{ count: number }>(db, `SELECT count(*)::int AS count FROM identity.groups WHERE application_id = $1`, [applicationId]);
    return row.count;
  },

  async delete(db: Queryable, applicationId: string, internalId: string): Promise<void> {
    await db.query(`DELETE FROM identity.groups WHERE application_id = $1 AND internal_id = $2`, [applicationId, internalId]);
  },

  /** Adds members in the given order; existing memberships are left as they are. */
  async addMembers(db: Queryable, applicationId: string, groupId: string, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    await db.query(
      `INSERT INTO identity.group_members (application_id, group_id, user_id)
       SELECT $1, $2, user_id FROM unnest($3::bigint[]) WITH ORDINALITY AS input(user_id, position)
       ORDER BY position
       ON CONFLICT (group_id, user_id) DO NOTHING`,
      [applicationId, groupId, [...new Set(userIds)]],
    );
  },

  async removeMembers(db: Queryable, applicationId: string, groupId: string, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    await db.query(
      `DELETE FROM identity.group_members WHERE application_id = $1 AND group_id = $2 AND user_id = ANY($3::bigint[])`,
      [applicationId, groupId, [...userIds]],
    );
  },

  /** Makes the membership exactly `userIds`. */
  async replaceMembers(db: Queryable, applicationId: string, groupId: string, userIds: readonly string[]): Promise<void> {
    await db.query(
      `DELETE FROM identity.group_members WHERE application_id = $1 AND group_id = $2 AND NOT (user_id = ANY($3::bigint[]))`,
      [applicationId, groupId, [...userIds]],
    );
    await groupsRepository.addMembers(db, applicationId, groupId, userIds);
  },

  /** Members in the order they were added. */
  async members(db: Queryable, applicationId: string, groupId: string): Promise<UserRow[]> {
    return rows<UserRow>(
      db,
      `SELECT ${usersTable.select} FROM identity.group_members m JOIN identity.users u ON u.internal_id = m.user_id
       WHERE m.application_id = $1 AND m.group_id = $2 ORDER BY m.added_seq`,
      [applicationId, groupId],
    );
  },

  /** A page of members by internal user id, after `afterUserId`. */
  async membersPage(
    db: Queryable,
    applicationId: string,
    groupId: string,
    options: { afterUserId: string | null; limit: number },
  ): Promise<UserRow[]> {
    return rows<UserRow>(
      db,
      `SELECT ${usersTable.select} FROM identity.group_members m JOIN identity.users u ON u.internal_id = m.user_id
       WHERE m.application_id = $1 AND m.group_id = $2 AND ($3::bigint IS NULL OR m.user_id > $3::bigint)
       ORDER BY m.user_id LIMIT $4`,
      [applicationId, groupId, options.afterUserId, options.limit],
    );
  },

  async countMembers(db: Queryable, applicationId: string, groupId: string): Promise<number> {
    const [row] = await rows<{ count: string }>(
      db,
      `SELECT count(*) AS count FROM identity.group_members WHERE application_id = $1 AND group_id = $2`,
      [applicationId, groupId],
    );
    return Number(row.count);
  },
};
