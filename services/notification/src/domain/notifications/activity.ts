/**
 * Notifications that activity in conversations causes: the conversation
 * worker's relay asks for them, one call per outbox entry of its own, and may ask again after a
 * lost answer; a recipient already notified for that entry gets nothing more.
 */
import { randomUUID } from 'node:crypto';
import type { ActivityNotifications } from '@collab/shared';
import { notificationsRepository } from '../../repositories/notifications.repository.js';
import { createdEntries, eventsOutbox } from '../events/outbox.js';
import type { NotificationContext } from './notifications.js';

/** Stores the notifications and, in the same transaction, their events; returns how many were new. */
export async function createActivityNotifications(
  ctx: Pick<NotificationContext, 'db'>,
  applicationId: string,
  request: ActivityNotifications,
  requestId: string,
): Promise<number> {
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
  // One notification per recipient of an entry: the first named wins.
  const named = new Set<string>();
  const unique = rows.filter((row) => !named.has(row.recipientId) && named.add(row.recipientId));
  return ctx.db.transaction(async (tx) => {
    const inserted = await notificationsRepository.insert(
      tx,
      applicationId,
      unique.map((row) => ({ ...row, externalId: `cord:${randomUUID()}` })),
    );
    await eventsOutbox.record(tx, createdEntries(applicationId, requestId, inserted, request.linkBase));
    return inserted.length;
  });
}
