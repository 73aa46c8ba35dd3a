/**
 * What the conversation worker's relay does with each recorded entry: have the notification
 * service create the notifications it causes, then, for a new message, build its event from the
 * message and thread as they are now and hand it to the webhooks service, and queue its
 * link-preview job when it has URLs (as for an edit that changed them). The calls carry the
 * entry's id, and a message has one preview job at a time, so that a retry after a lost answer
 * creates, records and queues nothing twice.
 */
import {
  createActivityNotifications,
  recordWebhookEvents,
  type ActivityNotifications,
  type InternalClient,
  type Logger,
  type WebhookTargets,
} from '@collab/shared';
import type { OutboxBatchHandlers, OutboxEntry, OutboxHandlers, OutboxProcessor } from '@collab/shared/storage';
import type { MessageRow } from '../../entities/index.js';
import { messagesRepository } from '../../repositories/messages.repository.js';
import { reactionsRepository } from '../../repositories/reactions.repository.js';
import type { ConversationContext } from '../context.js';
import { queuePreviewsOfNewMessages, type NewMessage } from '../link-previews/link-previews.js';
import { ACTION_TRANSLATION_KEYS } from '../messages/action-messages.js';
import { threadMessageAddedPayloads } from './message-added.js';
import { eventsOutbox, type LinksChanged, type MessageAdded } from './outbox.js';
import type { Recipient } from './recipients.js';

export interface EventClients {
  webhooks: InternalClient;
  /** Whether anyone receives an application's events, asked before any is built. */
  targets: WebhookTargets;
  notification: InternalClient;
}

type Notifications = Pick<ActivityNotifications, 'replies' | 'threadAction' | 'reaction'>;
type Entry = { id: string; applicationId: string; requestId: string; payload: { linkBase: string } };

/** A new message notifies its recipients with replies, an action message with thread actions. */
function addedNotifications(message: MessageRow, recipients: readonly Recipient[]): Notifications {
  const replies = recipients.flatMap(({ userId, replyActions }) => (replyActions ? [{ recipientId: userId, replyActions }] : []));
  const threadActionRecipients = recipients.filter((recipient) => recipient.replyActions === null).map((recipient) => recipient.userId);
  return {
    ...(replies.length > 0 && { replies }),
    ...(threadActionRecipients.length > 0 && {
      threadAction: {
        type: message.translationKey === ACTION_TRANSLATION_KEYS.resolved ? ('resolve' as const) : ('unresolve' as const),
        recipientIds: threadActionRecipients,
      },
    }),
  };
}

type Topics = typeof eventsOutbox.topics;
type MessageAddedEntry = OutboxEntry<MessageAdded['payload']>;
type LinksChangedEntry = OutboxEntry<LinksChanged['payload']>;

/**
 * The relay's handlers: every topic alone, and new messages and changed links also in batches
 * (their events go over in one call, their preview jobs into Redis in one round trip).
 */
// Over 80 lines: a table of one short handler per topic, each read on its own.
export function eventHandlers(ctx: ConversationContext, clients: EventClients): { handlers: OutboxHandlers<Topics>; batchHandlers: OutboxBatchHandlers<Topics> } {
  /**
   * The message as it is now, or null when it is gone (deleted, or being purged with its thread,
   * group, author or application): nothing is built from data being deleted.
   */
  const messageOf = (applicationId: string, messageId: string) => messagesRepository.findByInternalId(ctx.db, applicationId, messageId);

  /** What the notification service is asked to create for this entry, from the message's author unless told otherwise; null for nothing. */
  function activityOf(entry: Entry, message: MessageRow, notifications: Notifications, senderId = message.authorId): ActivityNotifications | null {
    if (!notifications.replies && !notifications.threadAction && !notifications.reaction) return null;
    return {
      sourceId: entry.id,
      requestId: entry.requestId,
      linkBase: entry.payload.linkBase,
      senderId,
      messageRef: message.internalId,
      threadRef: message.threadRef,
      ...notifications,
    };
  }

  /** Has the notification service create the notifications of one entry. */
  async function notify(entry: Entry, message: MessageRow, notifications: Notifications, senderId?: string): Promise<void> {
    const activity = activityOf(entry, message, notifications, senderId);
    if (activity) await createActivityNotifications(clients.notification, entry.applicationId, [activity], entry.requestId);
  }

  /**
   * New messages, in their order: first the notifications they cause, in one call per application
   * and link base (the events' usersToNotify name them, so they exist when an event arrives), then
   * the events, built together and handed over in one call per application and link base, and
   * last the preview jobs of the messages with URLs, all queued at once (a Redis outage then delays
   * no notification or event). Entries are ids of their own, so a retry creates and records
   * nothing twice.
   */
  async function messagesAdded(entries: readonly MessageAddedEntry[], log: Logger): Promise<void> {
    const read: NewMessage[] = [];
    const groups = new Map<string, MessageAddedEntry[]>();
    for (const entry of entries) {
      const key = JSON.stringify([entry.applicationId, entry.payload.linkBase]);
      groups.set(key, [...(groups.get(key) ?? []), entry]);
    }
    for (const group of groups.values()) {
      const { applicationId, requestId, payload } = group[0];
      const messages = await messagesRepository.findByInternalIds(
        ctx.db,
        applicationId,
        group.map((entry) => entry.payload.messageId),
      );
      // Keyed by the payload's plain id: only the rows found within the application are in it.
      const messageById = new Map<string, MessageRow>(messages.map((message) => [message.internalId, message]));
      const activities: ActivityNotifications[] = [];
      for (const entry of group) {
        const message = messageById.get(entry.payload.messageId);
        if (!message) continue;
        read.push({ message, applicationId, requestId: entry.requestId });
        const activity = activityOf(entry, message, addedNotifications(message, entry.payload.recipients));
        if (activity) activities.push(activity);
      }
      await createActivityNotifications(clients.notification, applicationId, activities, requestId);
      // Building payloads is most of the work: none for an application nobody receives events of.
      if (messageById.size === 0 || !(await clients.targets.has(applicationId, 'thread-message-added', requestId))) continue;
      const view = { linkBase: payload.linkBase, fileUrlSecret: ctx.files.urlSecret };
      const events = await threadMessageAddedPayloads(ctx, applicationId, group.map((entry) => entry.payload), view, requestId);
      const built = group.flatMap((entry) => {
        const event = events.get(entry.payload.messageId);
        return event ? [{ id: entry.id, type: 'thread-message-added' as const, payload: event }] : [];
      });
      if (built.length < group.length) log.info({ gone: group.length - built.length }, 'messages gone: no event for them');
      if (built.length > 0) await recordWebhookEvents(clients.webhooks, applicationId, built, requestId);
    }
    const queued = await queuePreviewsOfNewMessages(ctx.linkPreviews, read);
    if (queued > 0) log.info({ queued }, 'link-preview jobs queued');
  }

  /** Edits that changed links: their messages' preview jobs, all queued at once (each job reads the message's content when it runs). */
  async function linksChanged(entries: readonly LinksChangedEntry[]): Promise<void> {
    await ctx.linkPreviews.queue(entries.map((entry) => ({ applicationId: entry.applicationId, messageId: entry.payload.messageId, requestId: entry.requestId })));
  }

  const handlers: OutboxHandlers<Topics> = {
    'message.added': (entry, log) => messagesAdded([entry], log),

    'message.links-changed': (entry) => linksChanged([entry]),

    'message.mentioned': async (entry, log) => {
      const message = await messageOf(entry.applicationId, entry.payload.messageId);
      if (!message) {
        log.info('the message is gone: no notifications');
        return;
      }
      const replies = entry.payload.recipients.map(({ userId, replyActions }) => ({ recipientId: userId, replyActions }));
      await notify(entry, message, { replies });
    },

    'reaction.added': async (entry, log) => {
      const message = await messageOf(entry.applicationId, entry.payload.messageId);
      if (!message) {
        log.info('the message is gone: no notification');
        return;
      }
      const { authorId, userId, reaction } = entry.payload;
      // A reaction taken back, or gone with its user's deletion, before the relay got to it
      // notifies nobody: otherwise the notification would outlive the deletion that removed it.
      const current = await reactionsRepository.of(ctx.db, message.internalId);
      if (!current.some((each) => each.userId === userId && each.reaction === reaction)) {
        log.info('the reaction is gone: no notification');
        return;
      }
      await notify(entry, message, { reaction: { recipientId: authorId, reaction } }, userId);
    },
  };
  return { handlers, batchHandlers: { 'message.added': messagesAdded, 'message.links-changed': linksChanged } };
}

export function eventsProcessor(ctx: ConversationContext, clients: EventClients, logger: Logger): OutboxProcessor {
  const { handlers, batchHandlers } = eventHandlers(ctx, clients);
  return eventsOutbox.processor(ctx.db, handlers, logger, batchHandlers);
}
