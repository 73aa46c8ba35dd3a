/**
 * The column map of every notification table, taken from its entity: a row's fields are read (`select`,
 * `pick`) and written (`write`) through these, so that a column is named once, in its entity.
 */
import { entityColumns, sqlTable } from '@collab/shared';
import { NotificationEntity } from '../entities/index.js';

export const notificationsTable = sqlTable('notification.notifications', 'n', entityColumns(NotificationEntity));
