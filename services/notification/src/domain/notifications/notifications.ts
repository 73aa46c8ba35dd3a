/** Notification use cases. */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  pageCursors,
  type notificationRoutes,
  type CursorOf,
  type RecordWrite,
  type RouteBody,
  type Viewer,
} from '@collab/shared';
import { notificationsRepository } from '../../repositories/notifications.repository.js';
import { createdEntries, eventsOutbox } from '../events/outbox.js';
import type { NotificationContext } from '../context.js';
import { renderItems, visibilityOf } from './items.js';

/** POST /v1/notifications body, validated at the edge by the route's schema. */
export type NotificationInput = RouteBody<typeof notificationRoutes.createNotification>;

/**
 * Stores the notification and, in the same transaction, its `notification-created` event.
 * `linkBase`: the public base URL the client called.
 */
export async function createNotification(
  ctx: NotificationContext,
  applicationId: string,
  input: NotificationInput,
  options: { requestId: string; linkBase: string; recordWrite: RecordWrite<string> },
): Promise<string> {
  const { requestId, linkBase } = options;
  // The snake_case keys are the documented ones; their camelCase aliases win when both are sent.
  // The schema requires one spelling of each.
  const actorId = (input.actorID ?? input.actor_id)!;
  const recipientId = (input.recipientID ?? input.recipient_id)!;
  const { users } = await ctx.identity.lookup(applicationId, { userIds: [actorId, recipientId] }, requestId);
  if (!users.has(actorId)) throw new ApiError('user_not_found', `Invalid actor user id: ${actorId}.`);
  if (!users.has(recipientId)) throw new ApiError('user_not_found', `Invalid recipient user id: ${recipientId}.`);

  const id = `cord:${randomUUID()}`;
  await ctx.db.transaction(async (tx) => {
    const inserted = await notificationsRepository.insert(tx, applicationId, [
      {
        externalId: id,
        kind: 'external',
        recipientId,
        actorId,
        template: input.template,
        url: input.url,
        iconUrl: input.iconUrl ?? null,
        extraClassnames: input.extraClassnames ?? null,
        metadata: input.metadata ?? {},
      },
    ]);
    await eventsOutbox.record(tx, createdEntries(applicationId, requestId, inserted.map((row) => row.internalId), linkBase));
    // The request's answer, stored with the notification (Idempotency-Key).
    await options.recordWrite(tx, id);
  });
  return id;
}

/**
 * GET /v1/users/<ID>/notifications: the items the recipient sees, newest first, those sent
 * through the API and those activity in conversations caused alike. Only shown notifications count in the total and fill the pages.
 */
export async function listNotifications(
  ctx: NotificationContext,
  applicationId: string,
  userId: string,
  page: { limit: number; token: CursorOf<typeof pageCursors.notifications> | null },
  linkBase: string,
  requestId: string,
) {
  const recipient = await ctx.identity.lookup(applicationId, { userIds: [userId] }, requestId);
  if (!recipient.users.has(userId)) throw new ApiError('user_not_found', `Platform user ${userId} not found.`);
  // A notification recorded after this read counts as shown; rendering still leaves it out if its
  // message or thread is gone.
  const messageRefs = await notificationsRepository.messageRefsOf(ctx.db, applicationId, userId);
  const visibility = await visibilityOf(ctx, applicationId, messageRefs, requestId);
  const after = page.token ? { createdAtMicros: page.token.createdAtWithMicros, externalId: page.token.externalID } : null;
  const [{ rows, token }, total] = await Promise.all([
    pageCursors.notifications.page(
      page.limit,
      (limit) => notificationsRepository.itemsPage(ctx.db, applicationId, userId, visibility, { after, limit }),
      (last) => ({ externalID: last.externalId, createdAtWithMicros: last.cursor }),
    ),
    notificationsRepository.countItems(ctx.db, applicationId, userId, visibility),
  ]);
  return { notifications: await renderItems(ctx, applicationId, rows, linkBase, requestId), pagination: { token, total } };
}

/** Notifications a client-token read returns at most, as the original. */
const CLIENT_NOTIFICATIONS = 10;

/** GET /v1/client/notifications: the viewer's newest items. */
export async function clientNotifications(ctx: NotificationContext, applicationId: string, viewer: Viewer, linkBase: string, requestId: string) {
  const page = await listNotifications(ctx, applicationId, viewer.userId, { limit: CLIENT_NOTIFICATIONS, token: null }, linkBase, requestId);
  return { notifications: page.notifications, loading: false as const, hasMore: page.pagination.token !== null };
}

/** GET /v1/client/notificationCounts: the viewer's unread items. */
export async function clientNotificationCounts(ctx: NotificationContext, applicationId: string, viewer: Viewer, requestId: string) {
  const messageRefs = await notificationsRepository.messageRefsOf(ctx.db, applicationId, viewer.userId);
  const visibility = await visibilityOf(ctx, applicationId, messageRefs, requestId);
  return { unread: await notificationsRepository.countUnreadItems(ctx.db, applicationId, viewer.userId, visibility) };
}

/** Deletes the notification; a reaction's goes with the others shown in the same item. */
export async function deleteNotification(ctx: NotificationContext, applicationId: string, notificationId: string) {
  if (!(await notificationsRepository.delete(ctx.db, applicationId, notificationId)))
    throw new ApiError('not_found', `Notification ${notificationId} not found.`);
}
