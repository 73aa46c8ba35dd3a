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
