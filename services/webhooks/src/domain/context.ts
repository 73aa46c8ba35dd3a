import type { CredentialStore, Logger, OutboundClient, Producer } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { TargetsChanged } from './events/targets-version.js';

export interface WebhooksContext {
  db: DataSource;
  logger: Logger;
  /** Application secrets and webhook settings, from identity, cached with invalidation. */
  applications: CredentialStore;
  deliveryQueue: Producer<'webhooks-delivery'>;
  /** Writes a new webhook-targets version of the application (events/targets-version.ts). */
  targetsChanged: TargetsChanged;
  /** The outbound guard's rule, checked when a URL is registered (deliveries go through the worker's client). */
  outbound: OutboundClient;
}
