import { CreateNotificationSchema1795300783674 } from './1795300783674-create-notification-schema.js';

/** Every notification migration, oldest first. */
export const notificationMigrations = [CreateNotificationSchema1795300783674];
