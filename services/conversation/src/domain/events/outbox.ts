/**
 * The conversation service's outbox: what a change causes elsewhere is recorded in the transaction
 * that makes the change, so it exists exactly when the change does, and the conversation worker's
 * relay carries it to the notification and webhooks services and to the link-preview queue
 * (retried until they take it).
 */
import { REPLY_ACTIONS, s } from '@collab/shared';
import { defineOutbox } from '@collab/shared/storage';
import { CONVERSATION_SCHEMA } from '../../entities/index.js';

/**
 * `messageId` is the message's internal id; `linkBase` the public base URL of the request that
 * wrote it, for the file links of the events it causes.
 */
const ofMessage = { messageId: s.string({ minLength: 1 }), linkBase: s.string() };

export const eventsOutbox = defineOutbox(CONVERSATION_SCHEMA, {
  /**
   * A message was added: a user's, or an action message of a resolve or reopen. `recipients` are
   * the users it notifies, decided in its transaction (replyActions null for a thread action).
   */
  'message.added': s.object({
    ...ofMessage,
    recipients: s.array(
      s.object({
        userId: s.string({ minLength: 1 }),
        replyActions: s.array(s.enum(REPLY_ACTIONS)).nullable(),
      }),
    ),
  }),
  /** An edit mentions users the message did not mention before: each gets a reply notification. */
  'message.mentioned': s.object({
    ...ofMessage,
    recipients: s.array(s.object({ userId: s.string({ minLength: 1 }), replyActions: s.array(s.enum(REPLY_ACTIONS)) })),
  }),
  /**
   * An edit changed the content or skipLinkPreviews of a message that should now have previews of
   * some URLs: its link-preview job is queued. Recorded with the edit rather than queued by the
   * request, so that a job Redis could not take then is queued once it can (never lost).
   */
  'message.links-changed': s.object({ messageId: s.string({ minLength: 1 }) }),
  /** A reaction the message did not have, by someone other than its author, who is told. */
  'reaction.added': s.object({
    ...ofMessage,
    authorId: s.string({ minLength: 1 }),
    userId: s.string({ minLength: 1 }),
    reaction: s.string({ minLength: 1 }),
  }),
});

export type ConversationEvent = Parameters<typeof eventsOutbox.record>[1][number];
export type MessageAdded = Extract<ConversationEvent, { topic: 'message.added' }>;
export type LinksChanged = Extract<ConversationEvent, { topic: 'message.links-changed' }>;
