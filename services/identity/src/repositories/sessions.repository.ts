/** All SQL about access-token sessions. */
import { countAffected, rows, type Queryable } from '@collab/shared';
import type { SessionRow } from '../entities/index.js';
import { sessionsTable } from './tables.js';

export const sessionsRepository = {
  async insert(db: Queryable, session: SessionRow): Promise<void> {
    await db.query(`INSERT INTO identity.sessions (id, application_id, issued_at, expires_at) VALUES ($1, $2, $3, $4)`, [
      session.id,
      session.applicationId,
      session.issuedAt,
      session.expiresAt,
    ]);
  },

  async find(db: Queryable, sessionId: string): Promise<SessionRow | null> {
    const [row] = await rows<SessionRow>(
      db,
      `SELECT ${sessionsTable.select} FROM identity.sessions s WHERE s.id = $1`,
      [sessionId],
    );
    return row ?? null;
  },

  /** Clears the expiry: the token then answers `expired_access_token` ("revoked"). */
  async revoke(db: Queryable, sessionId: string): Promise<boolean> {
    const revoked = await countAffected(
      db,
      `UPDATE identity.sessions SET expires_at = NULL WHERE id = $1 AND expires_at IS NOT NULL`,
      [sessionId],
    );
    return revoked > 0;
  },

  async revokeAllOfApplication(db: Queryable, applicationId: string): Promise<number> {
    return countAffected(
      db,
      `UPDATE identity.sessions SET expires_at = NULL WHERE application_id = $1 AND expires_at IS NOT NULL`,
      [applicationId],
    );
  },
};
