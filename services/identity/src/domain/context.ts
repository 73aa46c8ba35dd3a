import type { Logger, OutboundClient, SecretBox } from '@collab/shared';
import type { OutboxProcessor } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import type { EphemeralPresenceStore } from '../repositories/presence.repository.js';
import type { IdentityNotices } from './notices.js';

/** What identity's use cases need: the database, its notices to other processes (notices.ts), the deletion outbox, the keys and outbound calls. */
export interface IdentityContext extends IdentityNotices {
  db: DataSource;
  /** Encrypts and decrypts the stored customer and application secrets. */
  secretBox: SecretBox;
  logger: Logger;
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
