/** Small SQL helpers every repository uses. */

/** What repositories need from TypeORM: `query`, on the data source or inside a transaction. */
export interface Queryable {
  // TypeORM's own signature returns any; repositories type their rows at the call site.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/**
 * Rows an INSERT/UPDATE/DELETE touched, counted in SQL: TypeORM answers UPDATE/DELETE … RETURNING
 * with `[rows, rowCount]`, which is easy to misread.
 */
export async function countAffected(db: Queryable, statement: string, parameters: unknown[]): Promise<number> {
  const rows: { count: number }[] = await db.query(
    `WITH affected AS (${statement} RETURNING 1) SELECT count(*)::int AS count FROM affected`,
    parameters,
  );
  return rows[0].count;
}

/**
 * Deletes at most `limit` rows of `table` matching `where` (whose parameters are `$1…`), skipping
 * rows another purge holds; returns how many. One short transaction per call. The keys are
 * collected first (`= ANY(ARRAY(…))`) so the delete probes the key's index instead of a planner's
 * join over the whole table.
 */
export function deleteBatch(
  db: Queryable,
  table: string,
  key: string,
  where: string,
  parameters: unknown[],
  limit: number,
): Promise<number> {
  return countAffected(
    db,
    `DELETE FROM ${table} WHERE ${key} = ANY(ARRAY(
       SELECT ${key} FROM ${table} WHERE ${where} LIMIT $${parameters.length + 1} FOR UPDATE SKIP LOCKED))`,
    [...parameters, limit],
  );
}

/** Waits, after a batch removed `removed` rows, as long as the pace asks (see purgePace). */
export type Pace = (removed: number) => Promise<void>;

/**
 * A pace of at most `rowsPerSecond` rows over all the batches it is given (0: no pause). Purges
 * delete rows nobody can read any more, so they can take longer, leaving the database's CPU to
 * the requests of other applications meanwhile.
 */
export function purgePace(rowsPerSecond: number): Pace {
  const started = performance.now();
  let rows = 0;
  return async (removed) => {
    rows += removed;
    if (rowsPerSecond <= 0) return;
    const wait = started + (rows * 1000) / rowsPerSecond - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
}

/** Repeats a batch step until it finds nothing left, pausing after each as `pace` asks; returns the total it removed. */
export async function drainBatches(step: () => Promise<number>, pace?: Pace): Promise<number> {
  let total = 0;
  for (let removed = await step(); removed > 0; removed = await step()) {
    total += removed;
    await pace?.(removed);
  }
  return total;
}

/** How purge jobs delete: rows per transaction, and at most how many a second (0: unpaced). */
export interface PurgeSettings {
  batchSize: number;
  rowsPerSecond: number;
}
