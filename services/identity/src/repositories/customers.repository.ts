/** All SQL about customers, the owners of applications. */
import { entityColumns, sqlTable, type Queryable } from '@collab/shared';
import { CustomerEntity, type CustomerRow } from '../entities/index.js';

/** identity.customers as `c`: its columns are those of its entity. */
const customersTable = sqlTable('identity.customers', 'c', entityColumns(CustomerEntity));

export const customersRepository = {
  async find(db: Queryable, customerId: string): Promise<CustomerRow | null> {
    const rows: CustomerRow[] = await db.query(
      `SELECT ${customersTable.select} FROM identity.customers c WHERE c.id = $1`,
      [customerId],
    );
    return rows[0] ?? null;
  },

  async count(db: Queryable): Promise<number> {
    const rows: { count: string }[] = await db.query(`SELECT count(*) AS count FROM identity.customers`);
    return Number(rows[0].count);
  },

  /** The first `limit` customers by creation, with how many applications each has (the operator's list). */
  async listWithApplicationCounts(db: Queryable, limit: number): Promise<{ id: string; createdAt: Date; applications: number }[]> {
    const rows: { id: string; createdAt: Date; applications: number }[] = await db.query(
      `SELECT c.id, c.created_at AS "createdAt",
              (SELECT count(*)::int FROM identity.applications a WHERE a.customer_id = c.id) AS applications
       FROM identity.customers c ORDER BY c.created_at, c.id LIMIT $1`,
      [limit],
    );
    return rows;
  },

  /** Creates the customer or sets its (sealed) secret. */
  async upsert(db: Queryable, customerId: string, secretEncrypted: string): Promise<void> {
    await db.query(
      `INSERT INTO identity.customers (id, secret_encrypted) VALUES ($1, $2)
       ON CONFLICT (id) DO UPDATE SET secret_encrypted = EXCLUDED.secret_encrypted, plaintext_secret = NULL`,
      [customerId, secretEncrypted],
    );
  },
};
