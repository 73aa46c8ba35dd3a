import type { CredentialStore, Logger, OutboundClient, Producer } from '@collab/shared';
import type { DataSource } from 'typeorm';

export interface WebhooksContext {
  db: DataSource;
  logger: Logger;
  /** Application secrets and webhook settings, from identity, cached with invalidation. */
  applications: CredentialStore;
  deliveryQueue: Producer<'webhooks-delivery'>;
  /** The outbound guard's rule, checked when a URL is registered (deliveries go through the worker's client). */
  outbound: OutboundClient;
}
