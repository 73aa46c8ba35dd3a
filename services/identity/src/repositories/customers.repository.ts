/** All SQL about customers, the owners of applications. */
import { entityColumns, sqlTable } from '@collab/shared';
import { CustomerEntity, type CustomerRow } from '../entities/index.js';
import type { Db } from './db.js';

/** identity.customers as `c`: its columns are those of its entity. */
const customersTable = sqlTable('identity.customers', 'c', entityColumns(CustomerEntity));

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
