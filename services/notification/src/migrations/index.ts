import { CreateNotificationSchema1795300783674 } from './1795300783674-create-notification-schema.js';
import { MarkForPurge1795303372278 } from './1795303372278-mark-for-purge.js';
import { RecordApplicationPurges1795310442825 } from './1795310442825-record-application-purges.js';
import { NotificationsFromActivity1795430000000 } from './1795430000000-notifications-from-activity.js';
import { RecordEventsInOutbox1795430000001 } from './1795430000001-record-events-in-outbox.js';
import { RecordIdempotencyKeys1795600000000 } from './1795600000000-record-idempotency-keys.js';
import { KeepApplicationPurgeTombstones1795856925003 } from './1795856925003-keep-application-purge-tombstones.js';

/** Every notification migration, oldest first. */
export const notificationMigrations = [
  CreateNotificationSchema1795300783674,
  MarkForPurge1795303372278,
  RecordApplicationPurges1795310442825,
  NotificationsFromActivity1795430000000,
  RecordEventsInOutbox1795430000001,
  RecordIdempotencyKeys1795600000000,
  KeepApplicationPurgeTombstones1795856925003,
];
