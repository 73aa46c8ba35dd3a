import { CreateNotificationSchema1795300783674 } from './1795300783674-create-notification-schema.js';
import { MarkForPurge1795303372278 } from './1795303372278-mark-for-purge.js';

/** Every notification migration, oldest first. */
export const notificationMigrations = [CreateNotificationSchema1795300783674, MarkForPurge1795303372278];
