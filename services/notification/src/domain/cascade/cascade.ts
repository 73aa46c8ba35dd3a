/**
 * The notification side of a deletion cascade: notifications to or from a deleted user become
 * unreadable now; a deleted application's are purged. Groups own none here.
 */
import { definePurge } from '@collab/shared/storage';
import { NOTIFICATION_SCHEMA } from '../../entities/index.js';
import { purgeRepository } from '../../repositories/purge.repository.js';

export const notificationPurge = definePurge({
  schema: NOTIFICATION_SCHEMA,
  mark: { user: purgeRepository.markUser },
  tables: [{ name: 'notifications', table: 'notification.notifications', key: 'internal_id' }],
});
