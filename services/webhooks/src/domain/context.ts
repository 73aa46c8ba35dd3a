import type { CredentialStore, Logger, Producer } from '@collab/shared';
import type { DataSource } from 'typeorm';

export interface WebhooksContext {
  db: DataSource;
  logger: Logger;
  /** Application secrets and webhook settings, from identity, cached with invalidation. */
  applications: CredentialStore;
  deliveryQueue: Producer<'webhooks-delivery'>;
}
