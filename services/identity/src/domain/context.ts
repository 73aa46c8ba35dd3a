import type { InvalidationMessage, Logger, OutboundClient, SecretBox } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { DeletionCascade } from './cascade/deletion-cascade.js';

/** What identity's use cases need: the database, cache invalidation, the cascade, the keys and outbound calls. */
export interface IdentityContext {
  db: DataSource;
  /** Encrypts and decrypts the stored customer and application secrets. */
  secretBox: SecretBox;
  logger: Logger;
  publishInvalidation(message: InvalidationMessage): Promise<void>;
  cascade: DeletionCascade;
  accessTokenSecret: string;
  /** Calls customer-given URLs (the webhook URL-verification handshake). */
  outbound: OutboundClient;
}
