/** All SQL about the stored secrets of customers and applications. */
import { rows, type Queryable } from '@collab/shared';

export type SecretTable = 'customers' | 'applications';

/** The stored secrets of both tables, for encrypting those from before encryption and checking the key. */
export const storedSecretsRepository = {
  /** Secrets stored in plaintext, locked until the transaction ends. */
  async lockPlaintext(db: Queryable, table: SecretTable): Promise<{ id: string; plaintextSecret: string }[]> {
    return rows<{ id: string; plaintextSecret: string }>(db, `SELECT id, plaintext_secret AS "plaintextSecret" FROM identity.${table} WHERE plaintext_secret IS NOT NULL FOR UPDATE`);
  },

  /** Replaces the plaintext of these rows by their sealed secrets, in one statement. */
  async storeEncrypted(db: Queryable, table: SecretTable, items: { id: string; secretEncrypted: string }[]): Promise<void> {
    await db.query(
      `UPDATE identity.${table} t SET secret_encrypted = u.sealed, plaintext_secret = NULL
       FROM unnest($1::uuid[], $2::text[]) AS u(id, sealed) WHERE t.id = u.id`,
      [items.map((row) => row.id), items.map((row) => row.secretEncrypted)],
    );
  },

  async oldestEncrypted(db: Queryable, table: SecretTable): Promise<{ id: string; secretEncrypted: string } | null> {
    const [row] = await rows<{ id: string; secretEncrypted: string }>(
      db,
      `SELECT id, secret_encrypted AS "secretEncrypted" FROM identity.${table}
       WHERE secret_encrypted IS NOT NULL ORDER BY created_at, id LIMIT 1`,
    );
    return row ?? null;
  },
};
