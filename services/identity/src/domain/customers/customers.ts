/** Customers own applications; they are provisioned by configuration or the CLI (behavior.md §4.6). */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { customersRepository } from '../../repositories/applications.repository.js';
import { generateSecret } from '../secrets.js';

export interface NewCustomer {
  id: string;
  secret: string;
}

export async function createCustomer(db: DataSource): Promise<NewCustomer> {
  const customer = { id: randomUUID(), secret: generateSecret() };
  await customersRepository.upsert(db, customer.id, customer.secret);
  return customer;
}

/**
 * At boot: make sure the configured customer exists with its secret; with none configured and
 * none stored, create one and return it so that it is printed once.
 */
export async function ensureBootCustomer(
  db: DataSource,
  configured: { id: string; secret: string } | null,
): Promise<NewCustomer | null> {
  if (configured) {
    await customersRepository.upsert(db, configured.id, configured.secret);
    return null;
  }
  return db.transaction(async (tx) => {
    // Serialise replicas booting together so that exactly one creates the first customer.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('identity:first-customer'))`);
    if ((await customersRepository.count(tx)) > 0) return null;
    const customer = { id: randomUUID(), secret: generateSecret() };
    await customersRepository.upsert(tx, customer.id, customer.secret);
    return customer;
  });
}
