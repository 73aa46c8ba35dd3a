/** Customers own applications; they are provisioned by configuration or the CLI. */
import { randomUUID } from 'node:crypto';
import { customersRepository } from '../../repositories/customers.repository.js';
import type { IdentityContext } from '../context.js';
import { generateSecret, prepareStoredSecrets, sealSecret, type SecretsContext } from '../secrets.js';

export interface NewCustomer {
  id: string;
  secret: string;
}

export async function createCustomer(ctx: SecretsContext): Promise<NewCustomer> {
  const customer = { id: randomUUID(), secret: generateSecret() };
  await customersRepository.upsert(ctx.db, customer.id, sealSecret(ctx.secretBox, 'customer', customer.id, customer.secret));
  return customer;
}

/**
 * At boot, once the schema is migrated: check the key against the stored secrets and encrypt
 * those from before encryption (prepareStoredSecrets; a wrong key stops the boot here, before
 * anything is written with it), then make sure the configured customer exists with its secret;
 * with none configured and none stored, create one and return it so that it is printed once.
 */
export async function ensureBootCustomer(
  ctx: SecretsContext & Pick<IdentityContext, 'logger'>,
  configured: { id: string; secret: string } | null,
): Promise<NewCustomer | null> {
  const encrypted = await prepareStoredSecrets(ctx);
  if (encrypted > 0) ctx.logger.info({ encrypted }, 'encrypted the secrets stored before encryption');
  if (configured) {
    await customersRepository.upsert(ctx.db, configured.id, sealSecret(ctx.secretBox, 'customer', configured.id, configured.secret));
    return null;
  }
  return ctx.db.transaction(async (tx) => {
    // Serialise replicas booting together so that exactly one creates the first customer.
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('identity:first-customer'))`);
    if ((await customersRepository.count(tx)) > 0) return null;
    const customer = { id: randomUUID(), secret: generateSecret() };
    await customersRepository.upsert(tx, customer.id, sealSecret(ctx.secretBox, 'customer', customer.id, customer.secret));
    return customer;
  });
}
