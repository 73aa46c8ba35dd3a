/**
 * This service's part of importing a customer dump: notifications of every kind with their read
 * state and time. The dump's own notification id becomes the row's source, so that a notification
 * is imported once however often the import runs; no `notification-created` event is recorded,
 * since the notification was delivered by the original service when it happened.
 */
import type { ImportHandlers } from '@collab/shared';
import { importRepository } from '../../repositories/import.repository.js';
import type { NotificationContext } from '../context.js';

export function importHandlers(ctx: Pick<NotificationContext, 'db'>): ImportHandlers {
  return {
    notifications: async (applicationId, rows, overwrite) => ({ inserted: await importRepository.notifications(ctx.db, applicationId, rows, overwrite) }),
  };
}
