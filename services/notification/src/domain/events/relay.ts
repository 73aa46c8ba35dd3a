/**
 * What the notification worker's relay does with each recorded event: build the notification as
 * its recipient's list shows it now, and hand it to the webhooks service under the outbox entry's
 * id, so that a retry after a lost answer records nothing twice.
 */
import { hasWebhookTargets, recordWebhookEvents, type InternalClient, type Logger } from '@collab/shared';
import type { OutboxHandlers, OutboxProcessor } from '@collab/shared/storage';
import { notificationsRepository } from '../../repositories/notifications.repository.js';
import { renderItems, visibilityOf } from '../notifications/items.js';
import type { NotificationContext } from '../notifications/notifications.js';
import { eventsOutbox } from './outbox.js';

export function eventHandlers(ctx: NotificationContext, webhooks: InternalClient): OutboxHandlers<typeof eventsOutbox.topics> {
  return {
    'notification.created': async ({ id, applicationId, requestId, payload }, log) => {
      // Rendering asks conversation and identity: none for an application nobody receives events of.
      if (!(await hasWebhookTargets(webhooks, applicationId, 'notification-created', requestId))) return;
      // Gone (deleted, or being purged with its recipient, sender or application): no event is
      // built from data being deleted.
      const row = await notificationsRepository.find(ctx.db, applicationId, payload.notificationId);
      if (!row) {
        log.info('the notification is gone: no event');
        return;
      }
      const visibility = await visibilityOf(ctx, applicationId, row.messageRef ? [row.messageRef] : [], requestId);
      // Not shown (its message is soft-deleted or gone, or the reaction was taken back): dropped, as the original does.
      const item = await notificationsRepository.itemOf(ctx.db, applicationId, row, visibility);
      const [shown] = item ? await renderItems(ctx, applicationId, [item], payload.linkBase, requestId) : [];
      if (!shown) {
        log.info('the notification is not shown: no event');
        return;
      }
      const event = { ...shown, recipientUserID: row.recipientId };
      await recordWebhookEvents(webhooks, applicationId, [{ id, type: 'notification-created', payload: event }], requestId);
    },
  };
}

export function eventsProcessor(ctx: NotificationContext, webhooks: InternalClient, logger: Logger): OutboxProcessor {
  return eventsOutbox.processor(ctx.db, eventHandlers(ctx, webhooks), logger);
}
