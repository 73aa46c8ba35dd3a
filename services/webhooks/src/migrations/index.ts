import { CreateWebhooksSchema1795400000000 } from './1795400000000-create-webhooks-schema.js';
import { RecordApplicationPurges1795856736100 } from './1795856736100-record-application-purges.js';
import { KeepApplicationPurgeTombstones1795856925273 } from './1795856925273-keep-application-purge-tombstones.js';
import { RecordDeliveryAttempts1795869029875 } from './1795869029875-record-delivery-attempts.js';

/** Every webhooks migration, oldest first. */
export const webhooksMigrations = [
  CreateWebhooksSchema1795400000000, RecordApplicationPurges1795856736100, KeepApplicationPurgeTombstones1795856925273,
  RecordDeliveryAttempts1795869029875,
];
