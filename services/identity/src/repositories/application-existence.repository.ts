/**
 * Whether an application exists, as purge jobs of other services must know it before they remove
 * its data: definitively, never a state a DELETE still in progress could undo.
 */
import { ApiError } from '@collab/shared';
import type { DataSource } from 'typeorm';

/** How long the answer may wait for a DELETE in progress (below the callers' 5 s HTTP timeout). */
const LOCK_TIMEOUT = '4s';
/** SQLSTATE lock_not_available: the lock timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03';

export const applicationExistenceRepository = {
  /**
   * Reads the row FOR KEY SHARE, which waits for a DELETE holding it to commit or roll back: the
   * application deletes itself and asks the dependent services to purge inside one transaction,
   * so a purge job asking meanwhile gets the outcome, not the row as it was before. A DELETE still
   * undecided after LOCK_TIMEOUT answers 503: the caller asks again later.
   */
  async exists(db: DataSource, applicationId: string): Promise<boolean> {
    try {
      return await db.transaction(async (tx) => {
        await tx.query(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT}'`);
        const rows: unknown[] = await tx.query(`SELECT 1 FROM identity.applications WHERE id = $1 FOR KEY SHARE`, [applicationId]);
        return rows.length > 0;
      });
    } catch (error) {
      if ((error as { driverError?: { code?: string } }).driverError?.code !== LOCK_NOT_AVAILABLE) throw error;
      throw new ApiError('service_unavailable', 'A deletion of this application is in progress. Try again.', { headers: { 'Retry-After': '1' } });
    }
  },
};
