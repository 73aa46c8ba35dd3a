import { CreateIdentitySchema1763700000000 } from './1763700000000-create-identity-schema.js';
import { EncryptSecrets1795300000000 } from './1795300000000-encrypt-secrets.js';
import { RecordBatches1795310436605 } from './1795310436605-record-batches.js';
import { RecordDeletionsInOutbox1795320000000 } from './1795320000000-record-deletions-in-outbox.js';
import { ClearBatchPayloads1795320000001 } from './1795320000001-clear-batch-payloads.js';
import { AddEventWebhookSubscriptions1795420000000 } from './1795420000000-add-event-webhook-subscriptions.js';
import { RecordIdempotencyKeys1795600000000 } from './1795600000000-record-idempotency-keys.js';
import { KeepPreviousApplicationSecret1795600000001 } from './1795600000001-keep-previous-application-secret.js';
import { RecordImports1795700000000 } from './1795700000000-record-imports.js';
import { StoreImportChunksUncompressed1795700000001 } from './1795700000001-store-import-chunks-uncompressed.js';
import { StoreImportFiles1795700000002 } from './1795700000002-store-import-files.js';
import { RecordUserPreferences1795855184420 } from './1795855184420-record-user-preferences.js';
import { RecordDurablePresence1795857832949 } from './1795857832949-record-durable-presence.js';

/** Every identity migration, oldest first. */
export const identityMigrations = [
  CreateIdentitySchema1763700000000,
  EncryptSecrets1795300000000,
  RecordBatches1795310436605,
  RecordDeletionsInOutbox1795320000000,
  ClearBatchPayloads1795320000001,
  AddEventWebhookSubscriptions1795420000000,
  RecordIdempotencyKeys1795600000000,
  KeepPreviousApplicationSecret1795600000001,
  RecordImports1795700000000,
  StoreImportChunksUncompressed1795700000001,
  StoreImportFiles1795700000002,
  RecordUserPreferences1795855184420,
  RecordDurablePresence1795857832949,
];
