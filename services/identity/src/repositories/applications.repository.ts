/** All SQL about applications. */
import { countAffected, rows, type Queryable } from '@collab/shared';
import type { ApplicationRow } from '../entities/index.js';
import { applicationsTable } from './tables.js';

export type ApplicationFields = Partial<
  Pick<ApplicationRow, 'name' | 'iconUrl' | 'eventWebhookUrl' | 'eventWebhookSubscriptions' | 'redirectUri' | 'emailSettings'>
>;

export const applicationsRepository = {
  /** Any customer's application: used to verify server tokens, which carry only the app id. */
  async findById(db: Queryable, applicationId: string): Promise<ApplicationRow | null> {
    const [row] = await rows<ApplicationRow>(db, `SELECT ${applicationsTable.select} FROM identity.applications a WHERE a.id = $1`, [
      applicationId,
    ]);
    return row ?? null;
  },

  async find(db: Queryable, customerId: string, applicationId: string): Promise<ApplicationRow | null> {
    const [row] = await rows<ApplicationRow>(
      db,
      `SELECT ${applicationsTable.select} FROM identity.applications a WHERE a.customer_id = $1 AND a.id = $2`,
      [customerId, applicationId],
    );
    return row ?? null;
  },

  /** Every customer's applications, for the operator CLI. */
  async listAll(db: Queryable): Promise<ApplicationRow[]> {
    return rows<ApplicationRow>(db, `SELECT ${applicationsTable.select} FROM identity.applications a ORDER BY a.created_at, a.id`);
  },

  async list(db: Queryable, customerId: string): Promise<ApplicationRow[]> {
    return rows<ApplicationRow>(
      db,
      `SELECT ${applicationsTable.select} FROM identity.applications a WHERE a.customer_id = $1 ORDER BY a.created_at, a.id`,
      [customerId],
    );
  },

  async insert(
    db: Queryable,
    customerId: string,
    application: { id: string; secretEncrypted: string } & ApplicationFields & { name: string },
  ): Promise<void> {
    const params: unknown[] = [];
    const written = applicationsTable.write({ ...application, customerId }, params);
    await db.query(`INSERT INTO identity.applications (${written.columns.join(', ')}) VALUES (${written.placeholders.join(', ')})`, params);
  },

  async update(db: Queryable, customerId: string, applicationId: string, fields: ApplicationFields): Promise<void> {
    const params: unknown[] = [customerId, applicationId];
    const { set } = applicationsTable.write(fields, params);
    if (!set) return;
    await db.query(`UPDATE identity.applications SET ${set} WHERE customer_id = $1 AND id = $2`, params);
  },

  /**
   * Stores a new sealed secret. The current one becomes the previous secret, accepted until
   * `graceHours` from now by the database's clock (none when 0; a secret stored before encryption
   * is not kept). Answers that moment, or null when there is no previous secret now, or undefined
   * when the application does not exist.
   */
  async rotateSecret(
    db: Queryable,
    customerId: string,
    applicationId: string,
    secretEncrypted: string,
    graceHours: number,
  ): Promise<Date | null | undefined> {
    // Wrapped in a SELECT: TypeORM answers a bare UPDATE … RETURNING with [rows, rowCount].
    const found = await rows<{ previousSecretExpiresAt: Date | null }>(
      db,
      `WITH rotated AS (
         UPDATE identity.applications a SET
           previous_secret_encrypted = CASE WHEN $4::int > 0 THEN secret_encrypted END,
           previous_secret_expires_at = CASE WHEN $4::int > 0 AND secret_encrypted IS NOT NULL THEN now() + make_interval(hours => $4::int) END,
           secret_encrypted = $3, plaintext_secret = NULL
         WHERE customer_id = $1 AND id = $2
         RETURNING ${applicationsTable.pick('previousSecretExpiresAt')})
       SELECT * FROM rotated`,
      [customerId, applicationId, secretEncrypted, graceHours],
    );
    return found.length === 0 ? undefined : found[0].previousSecretExpiresAt;
  },

  /** Stops accepting the previous secret now (it stays stored, expired, until the next rotation); false when none was accepted. */
  async expirePreviousSecret(db: Queryable, customerId: string, applicationId: string): Promise<boolean> {
    const expired = await countAffected(
      db,
      `UPDATE identity.applications SET previous_secret_expires_at = now()
       WHERE customer_id = $1 AND id = $2 AND previous_secret_expires_at > now()`,
      [customerId, applicationId],
    );
    return expired > 0;
  },

  /**
   * Deletes the application; its users, groups, memberships and sessions go with it (FK cascade).
   * False when there was none (a concurrent DELETE won).
   */
  async delete(db: Queryable, customerId: string, applicationId: string): Promise<boolean> {
    return (await countAffected(db, `DELETE FROM identity.applications WHERE customer_id = $1 AND id = $2`, [customerId, applicationId])) > 0;
  },
};
