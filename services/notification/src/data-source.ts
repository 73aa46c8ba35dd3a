import { createServiceDataSource } from '@collab/shared/storage';
import { NOTIFICATION_SCHEMA, notificationEntities } from './entities/index.js';
import { notificationMigrations } from './migrations/index.js';

export function createNotificationDataSource(url: string, poolSize?: number) {
  return createServiceDataSource({
    url,
    schema: NOTIFICATION_SCHEMA,
    entities: notificationEntities,
    migrations: notificationMigrations,
    poolSize,
    applicationName: 'collab-notification',
  });
}
