/**
 * The column map of every webhooks table, taken from its entity: a row's fields are read (`select`,
 * `pick`) and written (`write`) through these, so that a column is named once, in its entity.
 */
import { entityColumns, sqlTable } from '@collab/shared';
import { DeliveryAttemptEntity, DeliveryEntity, EventEntity, RegistrationEntity } from '../entities/index.js';

export const registrationsTable = sqlTable('webhooks.registrations', 'r', entityColumns(RegistrationEntity));
export const eventsTable = sqlTable('webhooks.events', 'e', entityColumns(EventEntity));
export const deliveriesTable = sqlTable('webhooks.deliveries', 'd', entityColumns(DeliveryEntity));
export const attemptsTable = sqlTable('webhooks.delivery_attempts', 'a', entityColumns(DeliveryAttemptEntity));
