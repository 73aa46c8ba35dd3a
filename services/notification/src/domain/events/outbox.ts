/**
 * The notification service's outbox: each notification's `notification-created` event is
 * recorded in the transaction that inserts the notification, so it exists exactly when the
 * notification does, and the notification worker's relay hands it to the webhooks service
 * (retried until that succeeds).
 */
import { s } from '@collab/shared';
import { defineOutbox } from '@collab/shared/storage';
import { NOTIFICATION_SCHEMA } from '../../entities/index.js';

export const eventsOutbox = defineOutbox(NOTIFICATION_SCHEMA, {
  /**
   * A notification was created. `notificationId` is its internal id; `linkBase` the public base
   * URL of the request that caused it, for the file links of the message the event shows.
   */
  'notification.created': s.object({ notificationId: s.string({ minLength: 1 }), linkBase: s.string() }),
});

export type NotificationCreated = Parameters<typeof eventsOutbox.record>[1][number];

/** The entries of new notifications, to record in the transaction that inserts them. */
export function createdEntries(applicationId: string, requestId: string, notificationIds: readonly string[], linkBase: string): NotificationCreated[] {
  return notificationIds.map((notificationId) => ({
    topic: 'notification.created',
    applicationId,
    requestId,
    payload: { notificationId, linkBase },
  }));
}
