/**
 * The conversation service's outbox: a new message's event is recorded in the transaction that
 * writes the message, so it exists exactly when the message does, and the conversation worker's
 * relay carries it to the webhooks service (retried until that succeeds).
 */
import { s } from '@collab/shared';
import { defineOutbox } from '@collab/shared/storage';
import { CONVERSATION_SCHEMA } from '../../entities/index.js';

export const eventsOutbox = defineOutbox(CONVERSATION_SCHEMA, {
  /**
   * A message was added: a user's, or an action message of a resolve or reopen. `recipients` are
   * the users it notifies, decided in its transaction; `linkBase` is the public base URL of the
   * request that wrote it, for the file links of the event's message.
   */
  'message.added': s.object({
    messageId: s.string({ minLength: 1 }),
    linkBase: s.string(),
    recipients: s.array(
      s.object({
        userId: s.string({ minLength: 1 }),
        replyActions: s.array(s.enum(['mention', 'attach-file', 'create-thread'])).nullable(),
      }),
    ),
  }),
});

export type MessageAdded = Parameters<typeof eventsOutbox.record>[1][number];
