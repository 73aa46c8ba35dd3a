import type { InvalidationMessage, Logger, SecretBox } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { DeletionCascade } from './cascade/deletion-cascade.js';

/** What identity's use cases need: the database, cache invalidation, the cascade and the keys. */
export interface IdentityContext {
  db: DataSource;
  /** Encrypts and decrypts the stored customer and application secrets. */
  secretBox: SecretBox;
  logger: Logger;
  publishInvalidation(message: InvalidationMessage): Promise<void>;
  cascade: DeletionCascade;
  accessTokenSecret: string;
}
