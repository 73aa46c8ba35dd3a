/** All SQL about customers, applications and access-token sessions. */
import { countAffected, entityColumns, sqlTable } from '@collab/shared';
import { ApplicationEntity, CustomerEntity, type ApplicationRow, type CustomerRow, type SessionRow } from '../entities/index.js';
import type { Db } from './db.js';

/** identity.customers as `c` and identity.applications as `a`: their columns are those of their entities. */
const customersTable = sqlTable('identity.customers', 'c', entityColumns(CustomerEntity));
const applicationsTable = sqlTable('identity.applications', 'a', entityColumns(ApplicationEntity));
const APPLICATION_COLUMNS = applicationsTable.select;

export type ApplicationFields = Partial<
  Pick<ApplicationRow, 'name' | 'iconUrl' | 'eventWebhookUrl' | 'eventWebhookSubscriptions' | 'redirectUri' | 'emailSettings'>
>;

export const customersRepository = {
  async find(db: Db, customerId: string): Promise<CustomerRow | null> {
    const rows: CustomerRow[] = await db.query(
      `SELECT ${customersTable.select} FROM identity.customers c WHERE c.id = $1`,
      [customerId],
    );
    return rows[0] ?? null;
  },

  async count(db: Db): Promise<number> {
    const rows: { count: string }[] = await db.query(`SELECT count(*) AS count FROM identity.customers`);
    return Number(rows[0].count);
  },

  /** Creates the customer or sets its (sealed) secret. */
  async upsert(db: Db, customerId: string, secretEncrypted: string): Promise<void> {
    await db.query(
      `INSERT INTO identity.customers (id, secret_encrypted) VALUES ($1, $2)
       ON CONFLICT (id) DO UPDATE SET secret_encrypted = EXCLUDED.secret_encrypted, plaintext_secret = NULL`,
      [customerId, secretEncrypted],
    );
  },
};

export const applicationsRepository = {
  /** Any customer's application: used to verify server tokens, which carry only the app id. */
  async findById(db: Db, applicationId: string): Promise<ApplicationRow | null> {
    const rows: ApplicationRow[] = await db.query(`SELECT ${APPLICATION_COLUMNS} FROM identity.applications a WHERE a.id = $1`, [
      applicationId,
    ]);
    return rows[0] ?? null;
  },

  async find(db: Db, customerId: string, applicationId: string): Promise<ApplicationRow | null> {
    const rows: ApplicationRow[] = await db.query(
      `SELECT ${APPLICATION_COLUMNS} FROM identity.applications a WHERE a.customer_id = $1 AND a.id = $2`,
      [customerId, applicationId],
    );
    return rows[0] ?? null;
  },

  /** Every customer's applications, for the operator CLI. */
  async listAll(db: Db): Promise<ApplicationRow[]> {
    return db.query(`SELECT ${APPLICATION_COLUMNS} FROM identity.applications a ORDER BY a.created_at, a.id`);
  },

  async list(db: Db, customerId: string): Promise<ApplicationRow[]> {
    return db.query(
      `SELECT ${APPLICATION_COLUMNS} FROM identity.applications a WHERE a.customer_id = $1 ORDER BY a.created_at, a.id`,
      [customerId],
    );
  },

  async insert(
    db: Db,
    customerId: string,
    application: { id: string; secretEncrypted: string } & ApplicationFields & { name: string },
  ): Promise<void> {
    const params: unknown[] = [];
    const written = applicationsTable.write({ ...application, customerId }, params);
    await db.query(`INSERT INTO identity.applications (${written.columns.join(', ')}) VALUES (${written.placeholders.join(', ')})`, params);
  },

  async update(db: Db, customerId: string, applicationId: string, fields: ApplicationFields): Promise<void> {
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
    db: Db,
    customerId: string,
    applicationId: string,
    secretEncrypted: string,
    graceHours: number,
  ): Promise<Date | null | undefined> {
    // Wrapped in a SELECT: TypeORM answers a bare UPDATE … RETURNING with [rows, rowCount].
    const rows: { previousSecretExpiresAt: Date | null }[] = await db.query(
      `WITH rotated AS (
         UPDATE identity.applications SET
           previous_secret_encrypted = CASE WHEN $4::int > 0 THEN secret_encrypted END,
           previous_secret_expires_at = CASE WHEN $4::int > 0 AND secret_encrypted IS NOT NULL THEN now() + make_interval(hours => $4::int) END,
           secret_encrypted = $3, plaintext_secret = NULL
         WHERE customer_id = $1 AND id = $2
         RETURNING previous_secret_expires_at)
       SELECT previous_secret_expires_at AS "previousSecretExpiresAt" FROM rotated`,
      [customerId, applicationId, secretEncrypted, graceHours],
    );
    return rows.length === 0 ? undefined : rows[0].previousSecretExpiresAt;
  },

  /** Stops accepting the previous secret now (it stays stored, expired, until the next rotation); false when none was accepted. */
  async expirePreviousSecret(db: Db, customerId: string, applicationId: string): Promise<boolean> {
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
  async delete(db: Db, customerId: string, applicationId: string): Promise<boolean> {
    return (await countAffected(db, `DELETE FROM identity.applications WHERE customer_id = $1 AND id = $2`, [customerId, applicationId])) > 0;
  },
};

export type SecretTable = 'customers' | 'applications';

/** The stored secrets of both tables, for encrypting those from before encryption and checking the key. */
export const storedSecretsRepository = {
  /** Secrets stored in plaintext, locked until the transaction ends. */
  async lockPlaintext(db: Db, table: SecretTable): Promise<{ id: string; plaintextSecret: string }[]> {
    return db.query(`SELECT id, plaintext_secret AS "plaintextSecret" FROM identity.${table} WHERE plaintext_secret IS NOT NULL FOR UPDATE`);
  },

  /** Replaces the plaintext of these rows by their sealed secrets, in one statement. */
  async storeEncrypted(db: Db, table: SecretTable, rows: { id: string; secretEncrypted: string }[]): Promise<void> {
    await db.query(
      `UPDATE identity.${table} t SET secret_encrypted = u.sealed, plaintext_secret = NULL
       FROM unnest($1::uuid[], $2::text[]) AS u(id, sealed) WHERE t.id = u.id`,
      [rows.map((row) => row.id), rows.map((row) => row.secretEncrypted)],
    );
  },

  async oldestEncrypted(db: Db, table: SecretTable): Promise<{ id: string; secretEncrypted: string } | null> {
    const rows: { id: string; secretEncrypted: string }[] = await db.query(
      `SELECT id, secret_encrypted AS "secretEncrypted" FROM identity.${table}
       WHERE secret_encrypted IS NOT NULL ORDER BY created_at, id LIMIT 1`,
    );
    return rows[0] ?? null;
  },
};

export const sessionsRepository = {
  async insert(db: Db, session: SessionRow): Promise<void> {
    await db.query(`INSERT INTO identity.sessions (id, application_id, issued_at, expires_at) VALUES ($1, $2, $3, $4)`, [
      session.id,
      session.applicationId,
      session.issuedAt,
      session.expiresAt,
    ]);
  },

  async find(db: Db, sessionId: string): Promise<SessionRow | null> {
    const rows: SessionRow[] = await db.query(
      `SELECT id, application_id AS "applicationId", issued_at AS "issuedAt", expires_at AS "expiresAt"
       FROM identity.sessions WHERE id = $1`,
      [sessionId],
    );
    return rows[0] ?? null;
  },

  /** Clears the expiry: the token then answers `expired_access_token` ("revoked"). */
  async revoke(db: Db, sessionId: string): Promise<boolean> {
    const revoked = await countAffected(
      db,
      `UPDATE identity.sessions SET expires_at = NULL WHERE id = $1 AND expires_at IS NOT NULL`,
      [sessionId],
    );
    return revoked > 0;
  },

  async revokeAllOfApplication(db: Db, applicationId: string): Promise<number> {
    return countAffected(
      db,
      `UPDATE identity.sessions SET expires_at = NULL WHERE application_id = $1 AND expires_at IS NOT NULL`,
      [applicationId],
    );
  },
};
