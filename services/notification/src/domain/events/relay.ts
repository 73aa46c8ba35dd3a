/**
 * What the notification worker's relay does with recorded events: hand the notifications that may
 * cause a mail (replies, thread actions) to the mail service, then build each notification as its
 * recipient's list shows it now and hand them to the webhooks service under the outbox entries'
 * ids. Both are idempotent, so a retry after a lost answer records nothing twice.
 */
import {
  MAILED_KINDS,
  recordMailCandidates,
  recordWebhookEvents,
  type InternalClient,
  type Logger,
  type MailCandidate,
  type WebhookTargets,
} from '@collab/shared';
import type { OutboxBatchHandlers, OutboxEntry, OutboxHandlers, OutboxProcessor } from '@collab/shared/storage';
import { notificationsRepository } from '../../repositories/notifications.repository.js';
import { renderItems, visibilityOf } from '../notifications/items.js';
import type { NotificationContext } from '../context.js';
import { eventsOutbox, type NotificationCreated } from './outbox.js';

type Topics = typeof eventsOutbox.topics;
type CreatedEntry = OutboxEntry<NotificationCreated['payload']>;

/** Where the relay hands what it relays. */
export interface EventClients {
  webhooks: InternalClient;
  /** Whether anyone receives an application's events, asked before any is built. */
  targets: WebhookTargets;
  mail: InternalClient;
}

/** The relay's handlers: each entry alone, or consecutive ones together (their events go over in one call per application). */
export function eventHandlers(ctx: NotificationContext, { webhooks, targets, mail }: EventClients): { handlers: OutboxHandlers<Topics>; batchHandlers: OutboxBatchHandlers<Topics> } {
  /** The mail a notification may cause (original-extras §5.1), or null for the kinds never mailed and one that is gone. */
  async function mailCandidateOf({ applicationId, requestId, payload }: CreatedEntry): Promise<MailCandidate | null> {
    const row = await notificationsRepository.find(ctx.db, applicationId, payload.notificationId);
    if (!row || !(MAILED_KINDS as readonly string[]).includes(row.kind) || !row.messageRef || !row.threadRef) return null;
    return {
      notificationId: row.internalId,
      kind: row.kind as MailCandidate['kind'],
      recipientId: row.recipientId,
      actorId: row.actorId,
      messageRef: row.messageRef,
      threadRef: row.threadRef,
      replyActions: row.replyActions,
      threadActionType: row.threadActionType,
      linkBase: payload.linkBase,
      requestId,
    };
  }

  /** The event of one notification as its recipient's list shows it now, or null when it is not shown. */
  async function eventOf({ applicationId, requestId, payload }: CreatedEntry, log: Logger): Promise<Record<string, unknown> | null> {
    // Gone (deleted, or being purged with its recipient, sender or application): no event is
    // built from data being deleted.
    const row = await notificationsRepository.find(ctx.db, applicationId, payload.notificationId);
    if (!row) {
      log.info({ notificationId: payload.notificationId }, 'the notification is gone: no event');
      return null;
    }
    const visibility = await visibilityOf(ctx, applicationId, row.messageRef ? [row.messageRef] : [], requestId);
    // Not shown (its message is soft-deleted or gone, or the reaction was taken back): dropped: receivers only hear of notifications a recipient can see.
    const item = await notificationsRepository.itemOf(ctx.db, applicationId, row, visibility);
    const [shown] = item ? await renderItems(ctx, applicationId, [item], payload.linkBase, requestId) : [];
    if (!shown) {
      log.info({ notificationId: payload.notificationId }, 'the notification is not shown: no event');
      return null;
    }
    return { ...shown, recipientUserID: row.recipientId };
  }

  async function notificationsCreated(entries: readonly CreatedEntry[], log: Logger): Promise<void> {
    const byApplication = new Map<string, CreatedEntry[]>();
    for (const entry of entries) byApplication.set(entry.applicationId, [...(byApplication.get(entry.applicationId) ?? []), entry]);
    for (const [applicationId, group] of byApplication) {
      const { requestId } = group[0];
      const candidates = (await Promise.all(group.map(mailCandidateOf))).filter((candidate) => candidate !== null);
      await recordMailCandidates(mail, applicationId, candidates, requestId);
      // Rendering asks conversation and identity: none for an application nobody receives events of.
      if (!(await targets.has(applicationId, 'notification-created', requestId))) continue;
      const events = [];
      for (const entry of group) {
        const event = await eventOf(entry, log);
        if (event) events.push({ id: entry.id, type: 'notification-created' as const, payload: event });
      }
      if (events.length > 0) await recordWebhookEvents(webhooks, applicationId, events, requestId);
    }
  }

  return {
    handlers: { 'notification.created': (entry, log) => notificationsCreated([entry], log) },
    batchHandlers: { 'notification.created': notificationsCreated },
  };
}

export function eventsProcessor(ctx: NotificationContext, clients: EventClients, logger: Logger): OutboxProcessor {
  const { handlers, batchHandlers } = eventHandlers(ctx, clients);
  return eventsOutbox.processor(ctx.db, handlers, logger, batchHandlers);
}
