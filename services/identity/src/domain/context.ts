import type { InvalidationMessage, Logger, OutboundClient, SecretBox } from '@collab/shared';
import type { OutboxProcessor } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import type { EphemeralPresenceStore } from '../repositories/presence.repository.js';
import type { DirectoryChanged } from './directory-changes.js';

/** What identity's use cases need: the database, cache invalidation, the deletion outbox, the keys and outbound calls. */
export interface IdentityContext {
  db: DataSource;
  /** Encrypts and decrypts the stored customer and application secrets. */
  secretBox: SecretBox;
  logger: Logger;
  publishInvalidation(message: InvalidationMessage): Promise<void>;
  /** After a committed change of an application's users, groups or memberships, before it is answered. */
  directoryChanged: DirectoryChanged;
  /** Runs the deletions recorded in identity's outbox (events/relay.ts). */
  deletions: OutboxProcessor;
  accessTokenSecret: string;
  /** How long server tokens signed with a rotated application secret keep working (SECRET_ROTATION_GRACE_HOURS). */
  secretRotationGraceHours: number;
  /** Calls customer-given URLs (the webhook URL-verification handshake). */
  outbound: OutboundClient;
  /** Ephemeral presence, in Redis (domain/presence). */
  presence: EphemeralPresenceStore;
}
