import { CreateIdentitySchema1763700000000 } from './1763700000000-create-identity-schema.js';
import { EncryptSecrets1795300000000 } from './1795300000000-encrypt-secrets.js';
import { RecordBatches1795310436605 } from './1795310436605-record-batches.js';
import { AddEventWebhookSubscriptions1795420000000 } from './1795420000000-add-event-webhook-subscriptions.js';

/** Every identity migration, oldest first. */
export const identityMigrations = [
  CreateIdentitySchema1763700000000,
  EncryptSecrets1795300000000,
  RecordBatches1795310436605,
  AddEventWebhookSubscriptions1795420000000,
];
