/**
 * What the conversation worker's relay does with each recorded entry: have the notification
 * service create the notifications it causes, then, for a new message, build its event from the
 * message and thread as they are now and hand it to the webhooks service. Both calls carry the
 * entry's id, so that a retry after a lost answer creates and records nothing twice.
 */
import {
  createActivityNotifications,
  hasWebhookTargets,
  recordWebhookEvents,
  type ActivityNotifications,
  type InternalClient,
  type Logger,
} from '@collab/shared';
import type { OutboxHandlers, OutboxProcessor } from '@collab/shared/storage';
import type { MessageRow } from '../../entities/index.js';
import { messagesRepository } from '../../repositories/messages.repository.js';
import type { ConversationContext } from '../context.js';
import { ACTION_TRANSLATION_KEYS } from '../messages/action-messages.js';
import { threadMessageAddedPayload } from './message-added.js';
import { eventsOutbox } from './outbox.js';
import type { Recipient } from './recipients.js';

export interface EventClients {
  webhooks: InternalClient;
  notification: InternalClient;
}

type Notifications = Omit<ActivityNotifications, 'sourceId' | 'linkBase' | 'senderId' | 'messageRef' | 'threadRef'>;

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

export function eventHandlers(ctx: ConversationContext, clients: EventClients): OutboxHandlers<typeof eventsOutbox.topics> {
  /**
   * The message as it is now, or null when it is gone (deleted, or being purged with its thread,
   * group, author or application): nothing is built from data being deleted.
   */
  const messageOf = (applicationId: string, messageId: string) => messagesRepository.findByInternalId(ctx.db, applicationId, messageId);

  /** Has the notification service create the notifications of this entry, from the message's author unless told otherwise. */
  async function notify(
    entry: { id: string; applicationId: string; requestId: string; payload: { linkBase: string } },
    message: MessageRow,
    notifications: Notifications,
    senderId = message.authorId,
  ): Promise<void> {
    if (!notifications.replies && !notifications.threadAction && !notifications.reaction) return;
    await createActivityNotifications(
      clients.notification,
      entry.applicationId,
      {
        sourceId: entry.id,
        linkBase: entry.payload.linkBase,
        senderId,
        messageRef: message.internalId,
        threadRef: message.threadId,
        ...notifications,
      },
      entry.requestId,
    );
  }

  return {
    'message.added': async (entry, log) => {
      const { id, applicationId, requestId, payload } = entry;
      const message = await messageOf(applicationId, payload.messageId);
      if (!message) {
        log.info('the message is gone: no notifications, no event');
        return;
      }
      // The notifications first: the event's usersToNotify names them, so they exist when it arrives.
      await notify(entry, message, addedNotifications(message, payload.recipients));
      // Building the payload is most of the work: none for an application nobody receives events of.
      if (!(await hasWebhookTargets(clients.webhooks, applicationId, 'thread-message-added', requestId))) return;
      const view = { linkBase: payload.linkBase, fileUrlSecret: ctx.files.urlSecret };
      const event = await threadMessageAddedPayload(ctx, applicationId, payload.messageId, payload.recipients, view, requestId);
      if (!event) {
        log.info('the message is gone: no event');
        return;
      }
      await recordWebhookEvents(clients.webhooks, applicationId, [{ id, type: 'thread-message-added', payload: event }], requestId);
    },

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
      await notify(entry, message, { reaction: { recipientId: authorId, reaction } }, userId);
    },
  };
}

export function eventsProcessor(ctx: ConversationContext, clients: EventClients, logger: Logger): OutboxProcessor {
  return eventsOutbox.processor(ctx.db, eventHandlers(ctx, clients), logger);
}
