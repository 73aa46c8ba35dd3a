/**
 * The recorded application deletions of one schema (`<schema>.application_purges`): a deletion
 * stays recorded until the purge job that read it removed everything of the application.
 */
import type { Queryable } from '../sql.js';

export function applicationPurgeRequests(schema: string) {
  const table = `${schema}.application_purges`;
  return {
    /** Records an application's deletion until its purge completed; a repeated one replaces it. */
    async request(db: Queryable, applicationId: string, requestId: string): Promise<void> {
      await db.query(
        `INSERT INTO ${table} (application_id, request_id) VALUES ($1, $2)
         ON CONFLICT (application_id) DO UPDATE SET request_id = EXCLUDED.request_id, requested_at = now()`,
        [applicationId, requestId],
      );
    },

    /** The request id of the application's recorded deletion, or null. */
    async find(db: Queryable, applicationId: string): Promise<string | null> {
      const rows: { requestId: string }[] = await db.query(`SELECT request_id AS "requestId" FROM ${table} WHERE application_id = $1`, [
        applicationId,
      ]);
      return rows[0]?.requestId ?? null;
    },

    /** Removes the recorded deletion a job handled, unless a newer request replaced it. */
    async forget(db: Queryable, applicationId: string, requestId: string): Promise<void> {
      await db.query(`DELETE FROM ${table} WHERE application_id = $1 AND request_id = $2`, [applicationId, requestId]);
    },

    /** Applications whose recorded deletion has not been handled yet. */
    async pending(db: Queryable): Promise<string[]> {
      const rows: { applicationId: string }[] = await db.query(`SELECT application_id AS "applicationId" FROM ${table}`);
      return rows.map((row) => row.applicationId);
    },
  };
}
