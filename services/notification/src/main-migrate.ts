/** Creates the database if needed and applies the notification service's pending migrations. */
import { runMigrateMain } from '@collab/shared/storage';
import { createNotificationDataSource } from './data-source.js';
import { NOTIFICATION_SCHEMA } from './entities/index.js';

runMigrateMain({ service: 'notification', schema: NOTIFICATION_SCHEMA, createDataSource: createNotificationDataSource });
