import { CreateConversationSchema1795299835831 } from './1795299835831-create-conversation-schema.js';
import { AddFilterIndexes1795301400000 } from './1795301400000-add-filter-indexes.js';
import { MarkForPurge1795303284448 } from './1795303284448-mark-for-purge.js';
import { RecordApplicationPurges1795310439236 } from './1795310439236-record-application-purges.js';
import { RecordEventsInOutbox1795400000001 } from './1795400000001-record-events-in-outbox.js';
import { StoreLinkPreviews1795500000000 } from './1795500000000-store-link-previews.js';
import { RecordIdempotencyKeys1795600000000 } from './1795600000000-record-idempotency-keys.js';
import { RecordUploadStatus1795700000000 } from './1795700000000-record-upload-status.js';
import { KeepApplicationPurgeTombstones1795856924721 } from './1795856924721-keep-application-purge-tombstones.js';
import { IndexThreadStats1795900000000 } from './1795900000000-index-thread-stats.js';

/** Every conversation migration, oldest first. */
export const conversationMigrations = [
  CreateConversationSchema1795299835831,
  AddFilterIndexes1795301400000,
  MarkForPurge1795303284448,
  RecordApplicationPurges1795310439236,
  RecordEventsInOutbox1795400000001,
  StoreLinkPreviews1795500000000,
  RecordIdempotencyKeys1795600000000,
  RecordUploadStatus1795700000000,
  KeepApplicationPurgeTombstones1795856924721,
  IndexThreadStats1795900000000,
];
