/**
 * The recorded application deletions of one schema (`<schema>.application_purges`): a deletion
 * stays pending until the purge job that read it removed everything of the application, and is
 * kept after that as a tombstone (application ids are never reused), so that work arriving later
 * from another service finds the application deleted (admitsWrites).
 */
import { entityColumns, rows, sqlTable, type Queryable } from '../sql.js';
import { applicationPurgeEntity } from './table.js';

export function applicationPurgeRequests(schema: string) {
  const table = `${schema}.application_purges`;
  const { pick } = sqlTable(table, 'ap', entityColumns(applicationPurgeEntity(schema)));
  return {
    /** Records an application's deletion until its purge completed; a repeated one replaces it and purges again. */
    async request(db: Queryable, applicationId: string, requestId: string): Promise<void> {
      await db.query(
        `INSERT INTO ${table} (application_id, request_id) VALUES ($1, $2)
         ON CONFLICT (application_id) DO UPDATE SET request_id = EXCLUDED.request_id, requested_at = now(), completed_at = NULL`,
        [applicationId, requestId],
      );
    },

    /** The request id of the application's pending deletion, or null. */
    async find(db: Queryable, applicationId: string): Promise<string | null> {
      const [row] = await rows<{ requestId: string }>(
        db,
        `SELECT ${pick('requestId')} FROM ${table} ap WHERE ap.application_id = $1 AND ap.completed_at IS NULL`,
        [applicationId],
      );
      return row?.requestId ?? null;
    },

    /** Whether the application's deletion was ever recorded here, pending or completed. */
    async deleted(db: Queryable, applicationId: string): Promise<boolean> {
      return (await rows<unknown>(db, `SELECT 1 FROM ${table} WHERE application_id = $1`, [applicationId])).length > 0;
    },

    /** Marks the deletion a job handled completed, unless a newer request replaced it. */
    async complete(db: Queryable, applicationId: string, requestId: string): Promise<void> {
      await db.query(`UPDATE ${table} SET completed_at = now() WHERE application_id = $1 AND request_id = $2`, [applicationId, requestId]);
    },

    /** Applications whose recorded deletion has not been handled yet. */
    async pending(db: Queryable): Promise<string[]> {
      const found = await rows<{ applicationId: string }>(db, `SELECT ${pick('applicationId')} FROM ${table} ap WHERE ap.completed_at IS NULL`);
      return found.map((row) => row.applicationId);
    },
  };
}
