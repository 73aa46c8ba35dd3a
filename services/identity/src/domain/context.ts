import type { InvalidationMessage, Logger } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { DeletionCascade } from './cascade/deletion-cascade.js';

/** What identity's use cases need: the database, cache invalidation, the cascade and the signing key. */
export interface IdentityContext {
  db: DataSource;
  logger: Logger;
  publishInvalidation(message: InvalidationMessage): Promise<void>;
  cascade: DeletionCascade;
  accessTokenSecret: string;
}
