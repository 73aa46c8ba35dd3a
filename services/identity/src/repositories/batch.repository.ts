/**
 * The SQL of POST /v1/batch. The writes take the application id first; the job's own record is
 * named by its job id (test/operate/tenant-scope.test.ts lists why). Upserts in three steps,
 * each in the order of the ids (code-point order, the `C` collation of external_id): insert the
 * missing rows (`INSERT … ON CONFLICT DO NOTHING`), lock every row (`FOR NO KEY UPDATE`), then
 * write the provided fields. Two overlapping batches thus take their locks in the same order and
 * queue up instead of deadlocking. Multi-row statements stay far below
 * PostgreSQL's 65,535 bind parameters. The batch itself is recorded in identity.batches (its
 * state and outcome), written by the request and by the job.
 */
import { chunks, columnValue, deleteBatch, rows, type ColumnMap, type ErrorBody, type Queryable } from '@collab/shared';
import type { BatchRow, BatchState } from '../entities/index.js';
import type { GroupFields } from './groups.repository.js';
import { batchesTable, groupsTable, usersTable } from './tables.js';
import type { UserFields } from './users.repository.js';

/** Rows per multi-row statement: at most 1 + 1000 × 7 bind parameters. */
export const UPSERT_CHUNK_ROWS = 1000;
/** Memberships per statement (they travel as two array parameters). */
export const MEMBERSHIP_CHUNK = 10_000;

/**
 * Sets exactly the provided fields of each row (the rows exist: `insertMissing…` created the new
 * ones, and the caller holds their locks). Rows are grouped by the set of keys they provide; each
 * group is written by multi-row `UPDATE … FROM (VALUES …)` statements that set only those keys.
 * (Not `INSERT … ON CONFLICT DO UPDATE`: PostgreSQL checks NOT NULL on the proposed row before it
 * finds the conflict, so a group item without `name` could not use it.)
 */
async function updateFields<F extends object>(
  db: Queryable,
  { name, columns }: { name: string; columns: ColumnMap<F> },
  applicationId: string,
  items: readonly { externalId: string; fields: F }[],
): Promise<void> {
  const byKeys = new Map<string, { keys: (keyof F & string)[]; rows: { externalId: string; fields: F }[] }>();
  for (const row of items) {
    const keys = (Object.keys(row.fields) as (keyof F & string)[]).filter((key) => Object.hasOwn(columns, key)).sort();
    if (keys.length === 0) continue;
    const signature = keys.join(',');
    let group = byKeys.get(signature);
    if (!group) byKeys.set(signature, (group = { keys, rows: [] }));
    group.rows.push(row);
  }
  for (const { keys, rows: sameKeys } of byKeys.values()) {
    const valueColumns = ['external_id', ...keys.map((key) => columns[key].column)];
    const assignments = keys.map((key) => `${columns[key].column} = v.${columns[key].column}`).join(', ');
    for (const chunk of chunks(sameKeys, UPSERT_CHUNK_ROWS)) {
      const values: unknown[] = [applicationId];
      const tuples = chunk.map((row) => {
        values.push(row.externalId);
        const placeholders = [`$${values.length}::text`];
        for (const key of keys) {
          const value = row.fields[key];
          values.push(columnValue(columns[key].type, value));
          placeholders.push(`$${values.length}::${columns[key].type}`);
        }
        return `(${placeholders.join(', ')})`;
      });
      await db.query(
        `UPDATE ${name} AS t SET ${assignments}
         FROM (VALUES ${tuples.join(', ')}) AS v(${valueColumns.join(', ')})
         WHERE t.application_id = $1 AND t.external_id = v.external_id`,
        values,
      );
    }
  }
}

/**
 * Internal ids of the given rows of `table` (users or groups), each locked FOR NO KEY UPDATE in
 * the order of the ids, so that overlapping batches queue up instead of deadlocking; unknown ids
 * are absent.
 */
async function lockInIdOrder(
  db: Queryable,
  table: typeof usersTable | typeof groupsTable,
  applicationId: string,
  externalIds: readonly string[],
): Promise<Map<string, string>> {
  if (externalIds.length === 0) return new Map();
  const { alias } = table;
  const found = await rows<{ externalId: string; internalId: string }>(
    db,
    `SELECT ${table.pick('externalId', 'internalId')} FROM ${table.name} ${alias}
     WHERE ${alias}.application_id = $1 AND ${alias}.external_id = ANY($2::text[])
     ORDER BY ${alias}.external_id FOR NO KEY UPDATE`,
    [applicationId, externalIds],
  );
  return new Map(found.map((row) => [row.externalId, row.internalId]));
}

/** What a batch's record tells about it. */
export type BatchRecord = Pick<BatchRow, 'state' | 'message' | 'error'>;

export const batchRepository = {
  /** Records a batch before it is queued (state `waiting`). */
  async record(db: Queryable, jobId: string, applicationId: string, payload: object): Promise<void> {
    await db.query(`INSERT INTO identity.batches (job_id, application_id, payload) VALUES ($1, $2, $3::jsonb)`, [
      jobId,
      applicationId,
      JSON.stringify(payload),
    ]);
  },

  /** Removes the record of a batch that could not be queued (its request answers 503). */
  async forget(db: Queryable, jobId: string): Promise<void> {
    await db.query(`DELETE FROM identity.batches WHERE job_id = $1`, [jobId]);
  },

  /** The record of one of the application's batches, or null. */
  async find(db: Queryable, applicationId: string, jobId: string): Promise<BatchRecord | null> {
    const [row] = await rows<BatchRecord>(db, `SELECT ${batchesTable.pick('state', 'message', 'error')} FROM identity.batches b WHERE b.job_id = $1 AND b.application_id = $2`, [
      jobId,
      applicationId,
    ]);
    return row ?? null;
  },

  /** A job took the batch up: `active` unless it already finished. */
  async start(db: Queryable, jobId: string): Promise<void> {
    await db.query(`UPDATE identity.batches SET state = 'active' WHERE job_id = $1 AND state = 'waiting'`, [jobId]);
  },

  /**
   * The record with its body (null once finished), locked FOR UPDATE until the transaction ends:
   * two runs of the same batch (a retry while a stalled run still goes on, a job queued again)
   * apply it one after the other, and the second finds it finished. Null when there is none (its
   * application was deleted).
   */
  async lock(db: Queryable, jobId: string): Promise<(BatchRecord & Pick<BatchRow, 'payload'>) | null> {
    const [row] = await rows<BatchRecord & Pick<BatchRow, 'payload'>>(
      db,
      `SELECT ${batchesTable.pick('state', 'message', 'error')}, ${batchesTable.pick('payload')} FROM identity.batches b WHERE b.job_id = $1 FOR UPDATE`,
      [jobId],
    );
    return row ?? null;
  },

  /**
   * Completed with its message, in the transaction that applied it. A finished batch's body is
   * cleared: only its outcome is read afterwards, and the users' names and e-mails it holds must
   * not outlive their deletion.
   */
  async complete(db: Queryable, jobId: string, message: string): Promise<void> {
    await db.query(`UPDATE identity.batches SET state = 'completed', message = $2, payload = NULL, finished_at = now() WHERE job_id = $1`, [
      jobId,
      message,
    ]);
  },

  /** Failed for good with `{error, message}`, its body cleared, unless it already finished. */
  async fail(db: Queryable, jobId: string, error: ErrorBody): Promise<void> {
    await db.query(
      `UPDATE identity.batches SET state = 'failed', error = $2::jsonb, payload = NULL, finished_at = now()
       WHERE job_id = $1 AND finished_at IS NULL`,
      [jobId, JSON.stringify(error)],
    );
  },

  /** Batches not finished yet (waiting, or active when their job was lost), oldest first. */
  async unfinished(db: Queryable): Promise<Pick<BatchRow, 'jobId' | 'applicationId'>[]> {
    return rows<Pick<BatchRow, 'applicationId' | 'jobId'>>(
      db,
      `SELECT ${batchesTable.pick('jobId', 'applicationId')} FROM identity.batches b WHERE b.finished_at IS NULL ORDER BY b.created_at`,
    );
  },

  /** Deletes up to `limit` records in `state` that finished more than `hours` ago; returns how many. */
  prune: (db: Queryable, state: Extract<BatchState, 'completed' | 'failed'>, hours: number, limit: number) =>
    deleteBatch(db, 'identity.batches', 'job_id', `state = $1 AND finished_at < now() - make_interval(hours => $2)`, [state, hours], limit),

  /** Which of the given groups exist (no lock: the synchronous validation of a request). */
  async existingGroupIds(db: Queryable, applicationId: string, externalIds: readonly string[]): Promise<Set<string>> {
    if (externalIds.length === 0) return new Set();
    const found = await rows<{ externalId: string }>(
      db,
      `SELECT ${groupsTable.pick('externalId')} FROM identity.groups g WHERE g.application_id = $1 AND g.external_id = ANY($2::text[])`,
      [applicationId, [...new Set(externalIds)]],
    );
    return new Set(found.map((row) => row.externalId));
  },

  /**
   * Whether the application exists, locked FOR KEY SHARE until the transaction ends: it cannot be
   * deleted while the batch writes rows that reference it.
   */
  async lockApplication(db: Queryable, applicationId: string): Promise<boolean> {
    const found = await rows<unknown>(db, `SELECT 1 FROM identity.applications WHERE id = $1 FOR KEY SHARE`, [applicationId]);
    return found.length > 0;
  },

  /** Creates the users that do not exist yet, bare (defaults), in id order. */
  async insertMissingUsers(db: Queryable, applicationId: string, externalIds: readonly string[]): Promise<void> {
    if (externalIds.length === 0) return;
    await db.query(
      `INSERT INTO identity.users (application_id, external_id)
       SELECT $1, t.id FROM unnest($2::text[]) AS t(id) ORDER BY t.id COLLATE "C"
       ON CONFLICT (application_id, external_id) DO NOTHING`,
      [applicationId, externalIds],
    );
  },

  /** Internal ids of the given users, each locked FOR NO KEY UPDATE in id order; unknown ids are absent. */
  lockUsers: (db: Queryable, applicationId: string, externalIds: readonly string[]) => lockInIdOrder(db, usersTable, applicationId, externalIds),

  /** Writes exactly the provided fields of each user (the rows exist and are locked). */
  async updateUsers(db: Queryable, applicationId: string, items: readonly { externalId: string; fields: UserFields }[]): Promise<void> {
    await updateFields(db, usersTable, applicationId, items);
  },

  /** Creates the groups that do not exist yet with their name, in id order. */
  async insertMissingGroups(db: Queryable, applicationId: string, items: readonly { externalId: string; name: string }[]): Promise<void> {
    if (items.length === 0) return;
    await db.query(
      `INSERT INTO identity.groups (application_id, external_id, name)
       SELECT $1, t.id, t.name FROM unnest($2::text[], $3::text[]) AS t(id, name) ORDER BY t.id COLLATE "C"
       ON CONFLICT (application_id, external_id) DO NOTHING`,
      [applicationId, items.map((row) => row.externalId), items.map((row) => row.name)],
    );
  },

  /** Internal ids of the given groups, each locked FOR NO KEY UPDATE in id order; unknown ids are absent. */
  lockGroups: (db: Queryable, applicationId: string, externalIds: readonly string[]) => lockInIdOrder(db, groupsTable, applicationId, externalIds),

  /** Writes exactly the provided fields of each group (the rows exist and are locked). */
  async updateGroups(db: Queryable, applicationId: string, items: readonly { externalId: string; fields: GroupFields }[]): Promise<void> {
    await updateFields(db, groupsTable, applicationId, items);
  },

  /**
   * Makes the membership of each given group exactly its list of users: memberships not in the
   * list go, missing ones are added in list order (existing ones keep their place).
   */
  async replaceMemberships(
    db: Queryable,
    applicationId: string,
    memberships: readonly { groupId: string; userIds: readonly string[] }[],
  ): Promise<void> {
    // Whole groups per statement, about MEMBERSHIP_CHUNK memberships each.
    const batches: { groupId: string; userIds: readonly string[] }[][] = [[]];
    let size = 0;
    for (const entry of memberships) {
      if (size > 0 && size + entry.userIds.length > MEMBERSHIP_CHUNK) {
        batches.push([]);
        size = 0;
      }
      batches[batches.length - 1].push(entry);
      size += entry.userIds.length;
    }
    for (const batch of batches) {
      if (batch.length === 0) continue;
      const groupIds = batch.map((entry) => entry.groupId);
      const pairGroups = batch.flatMap((entry) => entry.userIds.map(() => entry.groupId));
      const pairUsers = batch.flatMap((entry) => [...entry.userIds]);
      await db.query(
        `DELETE FROM identity.group_members m
         WHERE m.application_id = $1 AND m.group_id = ANY($2::bigint[])
           AND NOT EXISTS (
             SELECT 1 FROM unnest($3::bigint[], $4::bigint[]) AS d(group_id, user_id)
             WHERE d.group_id = m.group_id AND d.user_id = m.user_id)`,
        [applicationId, groupIds, pairGroups, pairUsers],
      );
      if (pairUsers.length === 0) continue;
      await db.query(
        `INSERT INTO identity.group_members (application_id, group_id, user_id)
         SELECT $1, d.group_id, d.user_id FROM unnest($2::bigint[], $3::bigint[]) WITH ORDINALITY AS d(group_id, user_id, position)
         ORDER BY d.position
         ON CONFLICT (group_id, user_id) DO NOTHING`,
        [applicationId, pairGroups, pairUsers],
      );
    }
  },
};
