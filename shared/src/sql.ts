/** Small SQL helpers every repository uses. */
import type { EntitySchema, EntitySchemaColumnOptions } from 'typeorm';

/**
 * What repositories need from TypeORM: `query`, on the data source or inside a transaction. Its
 * answer is `unknown` here, so that a read cannot pass TypeORM's untyped rows on: it goes through
 * `rows<Row>`, which names what it reads.
 */
export interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * The rows a statement answers, as the caller's row type: the one place where TypeORM's untyped
 * answer becomes a row, so that a read names what it reads instead of passing `any` on.
 */
export async function rows<Row>(db: Queryable, sql: string, parameters?: unknown[]): Promise<Row[]> {
  return (await db.query(sql, parameters)) as Row[];
}

/**
 * `items` in slices of at most `size`, in order: multi-row statements are cut so that their bind
 * parameters stay under PostgreSQL's 65,535 per statement.
 */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let start = 0; start < items.length; start += size) out.push(items.slice(start, start + size));
  return out;
}

/**
 * Rows an INSERT/UPDATE/DELETE touched, counted in SQL: TypeORM answers UPDATE/DELETE … RETURNING
 * with `[rows, rowCount]`, which is easy to misread.
 */
export async function countAffected(db: Queryable, statement: string, parameters: unknown[]): Promise<number> {
  const [{ count }] = await rows<{ count: number }>(db, `WITH affected AS (${statement} RETURNING 1) SELECT count(*)::int AS count FROM affected`, parameters);
  return count;
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

/** A table's columns, keyed by the field names of its rows: each field's column and Postgres type. */
export type ColumnMap<Row> = { readonly [K in keyof Row & string]: { readonly column: string; readonly type: string } };

/**
 * The column map of a TypeORM entity, so that a table's columns are written once, in its entity:
 * a field's column is its `name` (else the field's own name), its type the entity's (`text[]`
 * for an array of text).
 */
export function entityColumns<Row>(entity: EntitySchema<Row>): ColumnMap<Row> {
  const columns: Record<string, { column: string; type: string }> = {};
  for (const [field, options] of Object.entries(entity.options.columns) as [string, EntitySchemaColumnOptions][]) {
    if (typeof options.type !== 'string') throw new Error(`${entity.options.name}.${field}: a column type must be named for the column map`);
    columns[field] = { column: options.name ?? field, type: options.array ? `${options.type}[]` : options.type };
  }
  return columns as ColumnMap<Row>;
}

/** A value as its column takes it as a parameter: JSON text for json and jsonb columns. */
export function columnValue(type: string, value: unknown): unknown {
  return (type === 'jsonb' || type === 'json') && value !== null && value !== undefined ? JSON.stringify(value) : value;
}

/**
 * The row helpers of one table: `select` lists every column as its field (`u.short_name AS
 * "shortName"`), so a row read back has the row type's keys; `write` turns the fields given into
 * columns and typed placeholders, for an INSERT's column list or an UPDATE's SET.
 */
export function sqlTable<Row>(name: string, alias: string, columns: ColumnMap<Row>) {
  const fields = Object.keys(columns) as (keyof Row & string)[];
  const selectOf = (field: keyof Row & string) => `${alias}.${columns[field].column}${columns[field].column === field ? '' : ` AS "${field}"`}`;
  return {
    name,
    alias,
    columns,
    select: fields.map(selectOf).join(', '),
    /** The select list of only these fields, for a read that needs no more. */
    pick: (...picked: (keyof Row & string)[]) => picked.map(selectOf).join(', '),
    /** One field read under another name, for an answer shaped otherwise than the row (a dump's field names, a view's). */
    as: (field: keyof Row & string, name: string) => `${alias}.${columns[field].column} AS "${name}"`,
    /** One field read as text under a name (its own by default): a bigint key or a JSON column as a dump writes it. */
    text: (field: keyof Row & string, as: string = field) => `${alias}.${columns[field].column}::text AS "${as}"`,
    /**
     * The fields given (keys whose value is undefined are not given; keys outside the map are
     * refused), in the map's order whatever the order given, so that one set of fields is always
     * one statement text; their values appended to `params`: `set` is `column = $n::type, …`.
     */
    write(given: Partial<Row>, params: unknown[]): { columns: string[]; placeholders: string[]; set: string } {
      const unknown = Object.entries(given).find(([field, value]) => value !== undefined && !Object.hasOwn(columns, field));
      if (unknown) throw new Error(`${name} has no column for the field ${unknown[0]}`);
      const written = { columns: [] as string[], placeholders: [] as string[] };
      for (const field of fields) {
        const value = given[field];
        if (value === undefined) continue;
        const column = columns[field];
        params.push(columnValue(column.type, value));
        written.columns.push(column.column);
        written.placeholders.push(`$${params.length}::${column.type}`);
      }
      return { ...written, set: written.columns.map((column, index) => `${column} = ${written.placeholders[index]}`).join(', ') };
    },
  };
}

/** Whether a statement failed on a unique constraint (PostgreSQL's unique_violation, 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string }).code === '23505' || (error as { driverError?: { code?: string } }).driverError?.code === '23505';
}
