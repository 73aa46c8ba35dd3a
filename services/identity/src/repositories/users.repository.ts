/** All SQL about users. Every method takes the application id first. */
import { rows, type Queryable } from '@collab/shared';
import type { UserRow } from '../entities/index.js';
import { usersTable } from './tables.js';

/** What a write of a user may set: every column but its ids and creation time. */
const NOT_WRITTEN: readonly string[] = ['internalId', 'applicationId', 'externalId', 'createdAt'] satisfies (keyof UserRow)[];
export type UserFields = Partial<Omit<UserRow, 'internalId' | 'applicationId' | 'externalId' | 'createdAt'>>;
export const USER_FIELDS = Object.keys(usersTable.columns).filter((field) => !NOT_WRITTEN.includes(field)) as (keyof UserFields)[];

type Written = ReturnType<typeof usersTable.write>;
/** The SET list of the fields written; with none, assigning the id to itself changes nothing but still finds the row. */
const assignmentsOf = (written: Written) => written.set || 'external_id = u.external_id';

/**
 * Statements of the repository that are issued as they stand, exported so that the bench's
 * raw-SQL baselines issue the very same text.
 */
export const usersStatements = {
  /** The user and the ids of its active groups ($1 application, $2 user). */
  findWithGroupIds: `SELECT ${usersTable.select}, ARRAY(
         SELECT g.external_id FROM identity.group_members m JOIN identity.groups g ON g.internal_id = m.group_id
         WHERE m.application_id = u.application_id AND m.user_id = u.internal_id AND g.status = 'active'
         ORDER BY m.added_seq) AS "groupIds"
       FROM identity.users u WHERE u.application_id = $1 AND u.external_id = $2`,
  /** Creates the user or updates the fields `written` ($1 application, $2 user, then its placeholders). */
  upsert: (written: Written) =>
    `INSERT INTO identity.users AS u (${['application_id', 'external_id', ...written.columns].join(', ')})
           VALUES (${['$1', '$2', ...written.placeholders].join(', ')})
           ON CONFLICT (application_id, external_id) DO UPDATE SET ${assignmentsOf(written)}
           RETURNING ${usersTable.pick('internalId')}, (u.xmax = 0) AS created`,
  /**
   * A page of users: $2 the id after which it starts, $3 the metadata filter, $4 the limit,
   * $5 the ILIKE pattern their ID, name or e-mail must match.
   */
  listPage: `SELECT ${usersTable.select} FROM identity.users u
       WHERE u.application_id = $1
         AND ($2::text IS NULL OR u.external_id > $2::text)
         AND ($3::jsonb IS NULL OR u.metadata @> $3::jsonb)
         AND ($5::text IS NULL OR u.external_id ILIKE $5 OR u.name ILIKE $5 OR u.email ILIKE $5)
       ORDER BY u.external_id
       LIMIT $4`,
  /**
   * listPage's page of $4 users as one JSON array built by PostgreSQL (each user the object `item`
   * names), with the last one's id and whether more follow (one more row is read to know).
   */
  listPageJson: (item: string) => `WITH page AS (
       SELECT u.*, row_number() OVER (ORDER BY u.external_id) AS position FROM identity.users u
       WHERE u.application_id = $1
         AND ($2::text IS NULL OR u.external_id > $2::text)
         AND ($3::jsonb IS NULL OR u.metadata @> $3::jsonb)
         AND ($5::text IS NULL OR u.external_id ILIKE $5 OR u.name ILIKE $5 OR u.email ILIKE $5)
       ORDER BY u.external_id
       LIMIT $4::int + 1)
     SELECT coalesce(json_agg(${item} ORDER BY u.position) FILTER (WHERE u.position <= $4::int), '[]')::text AS items,
       max(u.external_id) FILTER (WHERE u.position = $4::int) AS "lastId", count(*) > $4::int AS more
     FROM page u`,
  /** How many users match the metadata filter ($2) and the pattern ($3). */
  count: `SELECT count(*) AS count FROM identity.users
       WHERE application_id = $1 AND ($2::jsonb IS NULL OR metadata @> $2::jsonb)
         AND ($3::text IS NULL OR external_id ILIKE $3 OR name ILIKE $3 OR email ILIKE $3)`,
};

/** `text` as an SQL string literal (keys of our own schema, quoted all the same). */
function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** The ILIKE pattern of values containing `text` literally (its %, _ and backslash escaped), or null for no search. */
function containing(text: string | undefined): string | null {
  return text ? `%${text.replace(/[\\%_]/g, '\\$&')}%` : null;
}

export const usersRepository = {
  async find(db: Queryable, applicationId: string, externalId: string, forUpdate = false): Promise<UserRow | null> {
    const [row] = await rows<UserRow>(
      db,
      `SELECT ${usersTable.select} FROM identity.users u WHERE u.application_id = $1 AND u.external_id = $2${forUpdate ? ' FOR NO KEY UPDATE' : ''}`,
      [applicationId, externalId],
    );
    return row ?? null;
  },

  /**
   * The user with the ids of its active groups, in the order it joined them: what GET answers,
   * in one statement.
   */
  async findWithGroupIds(db: Queryable, applicationId: string, externalId: string): Promise<(UserRow & { groupIds: string[] }) | null> {
    const [row] = await rows<UserRow & { groupIds: string[] }>(db, usersStatements.findWithGroupIds, [applicationId, externalId]);
    return row ?? null;
  },

  /** Inserts the user unless it exists; returns the new row, or null when it already existed. */
  async insertIfAbsent(db: Queryable, applicationId: string, externalId: string, fields: UserFields): Promise<UserRow | null> {
    const params: unknown[] = [applicationId, externalId];
    const written = usersTable.write(fields, params);
    const [row] = await rows<UserRow>(
      db,
      `INSERT INTO identity.users AS u (${['application_id', 'external_id', ...written.columns].join(', ')})
       VALUES (${['$1', '$2', ...written.placeholders].join(', ')})
       ON CONFLICT (application_id, external_id) DO NOTHING
       RETURNING ${usersTable.select}`,
      params,
    );
    return row ?? null;
  },

  /**
   * Writes the given fields in one statement: creates the user when `create` allows and it does
   * not exist, else updates the fields given (none: the row is left as it is). Null when the user
   * does not exist and may not be created.
   */
  async upsert(
    db: Queryable,
    applicationId: string,
    externalId: string,
    fields: UserFields,
    options: { create: boolean },
  ): Promise<{ internalId: string; created: boolean } | null> {
    const values: unknown[] = [applicationId, externalId];
    const written = usersTable.write(fields, values);
    const [row] = options.create
      ? await rows<{ internalId: string; created: boolean }>(db, usersStatements.upsert(written), values)
      : // In a WITH: TypeORM answers a bare UPDATE … RETURNING with [rows, rowCount].
        await rows<{ internalId: string; created: boolean }>(
          db,
          `WITH updated AS (UPDATE identity.users u SET ${assignmentsOf(written)} WHERE u.application_id = $1 AND u.external_id = $2
             RETURNING ${usersTable.pick('internalId')}, false AS created)
           SELECT * FROM updated`,
          values,
        );
    return row ?? null;
  },

  /** One page in code-point order of the id, after `afterExternalId`. */
  async listPage(
    db: Queryable,
    applicationId: string,
    options: { afterExternalId: string | null; limit: number; metadata?: Record<string, unknown>; search?: string },
  ): Promise<UserRow[]> {
    return rows<UserRow>(
      db,
      usersStatements.listPage,
      [applicationId, options.afterExternalId, options.metadata ? JSON.stringify(options.metadata) : null, options.limit, containing(options.search)],
    );
  },

  /**
   * listPage as JSON text, for the list's answer: PostgreSQL writes each user as `{"id": …, <each
   * key of item: its column, or null>, "createdTimestamp": …}` so that Node passes the page on
   * without parsing 200 rows into objects and serialising them again. Timestamps as toISOString
   * writes them (milliseconds, UTC).
   */
  async listPageJson(
    db: Queryable,
    applicationId: string,
    options: { afterExternalId: string | null; limit: number; metadata?: Record<string, unknown>; search?: string },
    item: readonly (readonly [key: string, field: keyof UserRow | null])[],
  ): Promise<{ items: string; lastId: string | null; more: boolean }> {
    const fields = item.map(([key, field]) => `${sqlText(key)}, ${field === null ? 'NULL' : `u.${usersTable.columns[field].column}`}`);
    const object = `json_build_object('id', u.external_id, ${fields.join(', ')}, 'createdTimestamp', to_char(u.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`;
    const [page] = await rows<{ items: string; lastId: string | null; more: boolean }>(db, usersStatements.listPageJson(object), [
      applicationId,
      options.afterExternalId,
      options.metadata ? JSON.stringify(options.metadata) : null,
      options.limit,
      containing(options.search),
    ]);
    return page;
  },

  async count(db: Queryable, applicationId: string, metadata?: Record<string, unknown>, search?: string): Promise<number> {
    const [row] = await rows<{ count: string }>(
      db,
      usersStatements.count,
      [applicationId, metadata ? JSON.stringify(metadata) : null, containing(search)],
    );
    return Number(row.count);
  },

  async delete(db: Queryable, applicationId: string, internalId: string): Promise<void> {
    await db.query(`DELETE FROM identity.users WHERE application_id = $1 AND internal_id = $2`, [
      applicationId,
      internalId,
    ]);
  },
};
