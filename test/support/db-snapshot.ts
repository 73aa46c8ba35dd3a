/**
 * A fingerprint of everything a test system stores: one digest per table of every service schema.
 * Comparing two snapshots shows whether a request changed anything, whatever the table.
 */
import type pg from 'pg';

const SERVICE_SCHEMAS = ['identity', 'conversation', 'notification', 'webhooks'];
/** TypeORM's bookkeeping is not data a client can change. */
const IGNORED_TABLES = new Set(['migrations']);

export type DatabaseSnapshot = Record<string, { rows: number; digest: string | null }>;

export async function snapshotDatabase(sql: pg.Pool): Promise<DatabaseSnapshot> {
  const { rows: tables } = await sql.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE' ORDER BY 1, 2`,
    [SERVICE_SCHEMAS],
  );
  const snapshot: DatabaseSnapshot = {};
  for (const { schema, name } of tables) {
    if (IGNORED_TABLES.has(name)) continue;
    const table = `"${schema}"."${name}"`;
    const { rows } = await sql.query<{ rows: number; digest: string | null }>(
      `SELECT count(*)::int AS rows, md5(string_agg(t::text, ',' ORDER BY t::text)) AS digest FROM ${table} t`,
    );
    snapshot[`${schema}.${name}`] = rows[0];
  }
  return snapshot;
}
