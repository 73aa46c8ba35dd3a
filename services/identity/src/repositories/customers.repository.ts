/** All SQL about customers, the owners of applications. */
import { rows, type Queryable } from '@collab/shared';
import type { CustomerRow } from '../entities/index.js';
import { customersTable } from './tables.js';

export const customersRepository = {
  async find(db: Queryable, customerId: string): Promise<CustomerRow | null> {
    const [row] = await rows<CustomerRow>(
      db,
      `SELECT ${customersTable.select} FROM identity.customers c WHERE c.id = $1`,
      [customerId],
    );
    return row ?? null;
  },

  async count(db: Queryable): Promise<number> {
    const [row] = await rows<{ count: string }>(db, `SELECT count(*) AS count FROM identity.customers`);
    return Number(row.count);
  },

  /** The first `limit` customers by creation, with how many applications each has (the operator's list). */
  async listWithApplicationCounts(db: Queryable, limit: number): Promise<{ id: string; createdAt: Date; applications: number }[]> {
    return rows<{ id: string; createdAt: Date; applications: number }>(
      db,
      `SELECT ${customersTable.pick('id', 'createdAt')},
              (SELECT count(*)::int FROM identity.applications a WHERE a.customer_id = c.id) AS applications
       FROM identity.customers c ORDER BY c.created_at, c.id LIMIT $1`,
      [limit],
    );
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
