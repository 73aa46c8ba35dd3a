/**
 * Customer and application secrets: generated, compared in constant time, and stored encrypted
 * (SecretBox, AES-256-GCM), each bound to its row so that a sealed value copied to another row
 * does not open.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { SecretBoxError, type SecretBox } from '@collab/shared';
import { storedSecretsRepository, type SecretTable } from '../repositories/stored-secrets.repository.js';
import type { IdentityContext } from './context.js';

/** 64 lowercase hex characters, the form clients already store and check secrets in. */
export function generateSecret(): string {
  return createHash('sha256').update(randomUUID()).update(randomUUID()).digest('hex');
}

/** Compares secrets without leaking where they differ, nor their lengths: equal-length digests. */
export function secretsEqual(given: string, stored: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(stored).digest();
  return timingSafeEqual(a, b);
}

export type SecretOwner = 'customer' | 'application';
export type SecretsContext = Pick<IdentityContext, 'db' | 'secretBox'>;

const TABLES: [SecretOwner, SecretTable][] = [
  ['customer', 'customers'],
  ['application', 'applications'],
];

/** The additional authenticated data that binds a sealed secret to its row. */
const rowContext = (owner: SecretOwner, id: string) => `${owner}:${id}`;

export function sealSecret(box: SecretBox, owner: SecretOwner, id: string, secret: string): string {
  return box.seal(secret, rowContext(owner, id));
}

/** The plaintext secret of a stored customer or application; throws SecretBoxError when it does not open. */
export function openSecret(box: SecretBox, owner: SecretOwner, row: { id: string; secretEncrypted: string | null }): string {
  if (row.secretEncrypted === null)
    throw new SecretBoxError(`the secret of ${owner} ${row.id} is not encrypted yet; identity encrypts it when it starts`);
  return box.open(row.secretEncrypted, rowContext(owner, row.id));
}

/**
 * An application's previous secret while server tokens signed with it are still accepted (the
 * grace period after a rotation), else null. Sealed for the same row as the current one.
 */
export function openPreviousSecret(
  box: SecretBox,
  application: { id: string; previousSecretEncrypted: string | null; previousSecretExpiresAt: Date | null },
  now = new Date(),
): { secret: string; expiresAt: Date } | null {
  const { previousSecretEncrypted: sealed, previousSecretExpiresAt: expiresAt } = application;
  if (sealed === null || expiresAt === null || expiresAt <= now) return null;
  return { secret: box.open(sealed, rowContext('application', application.id)), expiresAt };
}

/**
 * Run before anything reads or writes secrets (at boot in ensureBootCustomer, and by the customer
 * CLI). First checks that the configured key opens what is stored, so that a wrong key stops the
 * process with a clear message instead of failing every token later or mixing keys; then encrypts
 * the secrets stored before encryption existed. Idempotent; replicas starting together take turns
 * on the row locks. Answers how many secrets it encrypted.
 */
export async function prepareStoredSecrets(ctx: SecretsContext): Promise<number> {
  for (const [owner, table] of TABLES) {
    const stored = await storedSecretsRepository.oldestEncrypted(ctx.db, table);
    if (!stored) continue;
    try {
      openSecret(ctx.secretBox, owner, stored);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      throw new Error(
        `SECRETS_ENCRYPTION_KEY does not decrypt the stored secrets (${owner} ${stored.id}): ` +
          'it is not the key they were encrypted with; start with that key (`npm start` keeps the key it drew in ' +
          '.data/dev-secrets.json of the checkout that created this database), or use a database of your own (DATABASE_URL)',
        { cause: error },
      );
    }
  }
  let encrypted = 0;
  for (const [owner, table] of TABLES) {
    encrypted += await ctx.db.transaction(async (tx) => {
      const rows = await storedSecretsRepository.lockPlaintext(tx, table);
      if (rows.length > 0)
        await storedSecretsRepository.storeEncrypted(
          tx,
          table,
          rows.map((row) => ({ id: row.id, secretEncrypted: sealSecret(ctx.secretBox, owner, row.id, row.plaintextSecret) })),
        );
      return rows.length;
    });
  }
  return encrypted;
}
