/**
 * What the conversation worker's relay does with each recorded event: build its payload from the
 * message and thread as they are now, and hand it to the webhooks service under the outbox
 * entry's id, so that a retry after a lost answer records nothing twice.
 */
import { hasWebhookTargets, recordWebhookEvents, type InternalClient, type Logger } from '@collab/shared';
import type { OutboxHandlers, OutboxProcessor } from '@collab/shared/storage';
import type { ConversationContext } from '../context.js';
import { threadMessageAddedPayload } from './message-added.js';
import { eventsOutbox } from './outbox.js';

export function eventHandlers(ctx: ConversationContext, webhooks: InternalClient): OutboxHandlers<typeof eventsOutbox.topics> {
  return {
    'message.added': async ({ id, applicationId, requestId, payload }, log) => {
      // Building the payload is most of the work: none for an application nobody receives events of.
      if (!(await hasWebhookTargets(webhooks, applicationId, 'thread-message-added', requestId))) return;
      const view = { linkBase: payload.linkBase, fileUrlSecret: ctx.files.urlSecret };
      const event = await threadMessageAddedPayload(ctx, applicationId, payload.messageId, payload.recipients, view, requestId);
      if (!event) {
        log.info('the message is gone: no event');
        return;
      }
      await recordWebhookEvents(webhooks, applicationId, [{ id, type: 'thread-message-added', payload: event }], requestId);
    },
  };
}

export function eventsProcessor(ctx: ConversationContext, webhooks: InternalClient, logger: Logger): OutboxProcessor {
  return eventsOutbox.processor(ctx.db, eventHandlers(ctx, webhooks), logger);
}
