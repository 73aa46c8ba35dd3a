/** All SQL about the stored secrets of customers and applications. */
import { rows, type Queryable } from '@collab/shared';
import { applicationsTable, customersTable } from './tables.js';

/** The two tables that store secrets, by name. */
const SECRET_TABLES = { customers: customersTable, applications: applicationsTable };
export type SecretTable = keyof typeof SECRET_TABLES;

/** The stored secrets of both tables, for encrypting those from before encryption and checking the key. */
export const storedSecretsRepository = {
  /** Secrets stored in plaintext, locked until the transaction ends. */
  async lockPlaintext(db: Queryable, table: SecretTable): Promise<{ id: string; plaintextSecret: string }[]> {
    const { name, alias, pick } = SECRET_TABLES[table];
    return rows<{ id: string; plaintextSecret: string }>(
      db,
      `SELECT ${pick('id', 'plaintextSecret')} FROM ${name} ${alias} WHERE ${alias}.plaintext_secret IS NOT NULL FOR UPDATE`,
    );
  },

  /** Replaces the plaintext of these rows by their sealed secrets, in one statement. */
  async storeEncrypted(db: Queryable, table: SecretTable, items: { id: string; secretEncrypted: string }[]): Promise<void> {
    await db.query(
      `UPDATE ${SECRET_TABLES[table].name} t SET secret_encrypted = u.sealed, plaintext_secret = NULL
       FROM unnest($1::uuid[], $2::text[]) AS u(id, sealed) WHERE t.id = u.id`,
      [items.map((row) => row.id), items.map((row) => row.secretEncrypted)],
    );
  },

  async oldestEncrypted(db: Queryable, table: SecretTable): Promise<{ id: string; secretEncrypted: string } | null> {
    const { name, alias, pick } = SECRET_TABLES[table];
    const [row] = await rows<{ id: string; secretEncrypted: string }>(
      db,
      `SELECT ${pick('id', 'secretEncrypted')} FROM ${name} ${alias}
       WHERE ${alias}.secret_encrypted IS NOT NULL ORDER BY ${alias}.created_at, ${alias}.id LIMIT 1`,
    );
    return row ?? null;
  },
};
