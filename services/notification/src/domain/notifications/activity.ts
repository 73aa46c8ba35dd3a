/**
 * Notifications that activity in conversations causes: the conversation worker's relay asks for
 * those of a batch of its outbox entries at once, and may ask again after a lost answer; a
 * recipient already notified for an entry gets nothing more.
 */
import { randomUUID } from 'node:crypto';
import type { ActivityNotifications } from '@collab/shared';
import { notificationsRepository, type NewNotification } from '../../repositories/notifications.repository.js';
import { createdEntries, eventsOutbox } from '../events/outbox.js';
import type { NotificationContext } from '../context.js';

/** The rows one entry causes: one per recipient, the first named wins. */
function rowsOf(request: ActivityNotifications): NewNotification[] {
  const { sourceId, senderId, messageRef, threadRef } = request;
  const common = { actorId: senderId, messageRef, threadRef, sourceId };
  const rows = [
    ...(request.replies ?? []).map(({ recipientId, replyActions }) => ({ ...common, kind: 'reply' as const, recipientId, replyActions })),
    ...(request.threadAction?.recipientIds ?? []).map((recipientId) => ({
      ...common,
      kind: 'thread_action' as const,
      recipientId,
      threadActionType: request.threadAction!.type,
    })),
    // A message's reactions show as one item of its author's.
    ...(request.reaction
      ? [{ ...common, kind: 'reaction' as const, recipientId: request.reaction.recipientId, reaction: request.reaction.reaction, aggregationKey: messageRef }]
      : []),
  ];
  const named = new Set<string>();
  return rows
    .filter((row) => !named.has(row.recipientId) && named.add(row.recipientId))
    .map((row) => ({ ...row, externalId: `cord:${randomUUID()}` }));
}

/**
 * Stores the notifications of every entry and, in the same transaction, their events (each with
 * its entry's request id and link base); returns how many were new.
 */
export async function createActivityNotifications(
  ctx: Pick<NotificationContext, 'db'>,
  applicationId: string,
  activities: readonly ActivityNotifications[],
): Promise<number> {
  const bySource = new Map(activities.map((activity) => [activity.sourceId, activity]));
  return ctx.db.transaction(async (tx) => {
    const inserted = await notificationsRepository.insert(tx, applicationId, activities.flatMap(rowsOf));
    const events = inserted.flatMap(({ internalId, sourceId }) => {
      // Every row inserted here carries the source id of the activity that named it.
      const { requestId, linkBase } = bySource.get(sourceId!)!;
      return createdEntries(applicationId, requestId, [internalId], linkBase);
    });
    await eventsOutbox.record(tx, events);
    return inserted.length;
  });
}
