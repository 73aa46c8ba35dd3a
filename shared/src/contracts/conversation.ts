/**
 * The conversation service's internal HTTP API for the notification service, which shows
 * messages and threads it does not own: it asks here instead of reading conversation's tables.
 * Messages and threads are named by conversation's internal references, which never change (a PUT
 * may change their ids). Producer and consumer both validate against these schemas.
 */
import { ApiError } from '../errors.js';
import type { InternalClient } from '../http/internal-client.js';
import { s, type Infer, type Schema } from '../schema/index.js';

const refs = s.array(s.string({ minLength: 1 }));

export const conversationInternal = {
  /**
   * Which of these messages exist (and their thread), whether each is soft-deleted, and who
   * reacted with what: what decides which notifications are listed. A message that is gone, or
   * being purged, is left out of the answer.
   */
  messageStates: {
    method: 'POST',
    path: '/internal/messages/states',
    request: s.object({ messageRefs: refs }),
    response: s.object({
      messages: s.array(
        s.object({
          ref: s.string(),
          deleted: s.boolean(),
          reactions: s.array(s.object({ userID: s.string(), reaction: s.string() })),
        }),
      ),
    }),
  },
  /**
   * The GET message and GET thread objects of these messages and threads (those that exist), with
   * file links under `linkBase` unless the conversation service has its own PUBLIC_URL.
   */
  views: {
    method: 'POST',
    path: '/internal/views',
    request: s.object({ messageRefs: refs, threadRefs: refs, linkBase: s.string() }),
    response: s.object({
      // `view` is the REST object as clients get it; what the notification service reads of it
      // besides passing it on is named beside it.
      messages: s.array(s.object({ ref: s.string(), id: s.string(), threadID: s.string(), view: s.unknown() })),
      threads: s.array(s.object({ ref: s.string(), name: s.string(), view: s.unknown() })),
    }),
  },
  /**
   * What a mail shows before its message (original-extras §5.4): how many messages of the thread,
   * not deleted, come before it, and the first and the last of them (null: none, or it is gone).
   */
  excerpt: {
    method: 'POST',
    path: '/internal/messages/excerpt',
    request: s.object({ messageRef: s.string({ minLength: 1 }) }),
    response: s.object({ earlierCount: s.integer({ minimum: 0 }), first: s.string().nullable(), previous: s.string().nullable() }),
  },
  /**
   * Unsubscribes a user from a thread, as a mail's unsubscribe link does (original-extras §5.7):
   * their participant record says `subscribed: false`. `found` is false when the thread is gone.
   */
  unsubscribe: {
    method: 'POST',
    path: '/internal/threads/unsubscribe',
    request: s.object({ threadRef: s.string({ minLength: 1 }), userId: s.string({ minLength: 1 }) }),
    response: s.object({ found: s.boolean() }),
  },
  /**
   * Posts a reply by mail (original-extras §5.8) as a message of `userId` in the thread, one
   * paragraph per entry, with the checks and effects of POST /v1/threads/<ID>/messages except that
   * the author's subscription stays as it was. `messageID` is the message's id, chosen by the mail
   * service for the reply: a reply posted again (its parser retrying) finds it and posts nothing
   * more. `messageID` is null in the answer when the thread is gone.
   */
  postReply: {
    method: 'POST',
    path: '/internal/threads/reply',
    request: s.object({
      threadRef: s.string({ minLength: 1 }),
      userId: s.string({ minLength: 1 }),
      messageID: s.string({ minLength: 1 }),
      paragraphs: s.array(s.string(), { minItems: 1 }),
      linkBase: s.string(),
    }),
    response: s.object({ messageID: s.string().nullable() }),
  },
} as const;

export type MessageStates = Infer<typeof conversationInternal.messageStates.response>['messages'];
export type ConversationViews = Infer<typeof conversationInternal.views.response>;
export type MessageExcerpt = Infer<typeof conversationInternal.excerpt.response>;

/** The calls of the notification service to the conversation service, their answers validated. */
export interface ConversationDirectory {
  messageStates(applicationId: string, messageRefs: readonly string[], requestId: string): Promise<MessageStates>;
  views(
    applicationId: string,
    request: { messageRefs: readonly string[]; threadRefs: readonly string[]; linkBase: string },
    requestId: string,
  ): Promise<ConversationViews>;
  excerpt(applicationId: string, messageRef: string, requestId: string): Promise<MessageExcerpt>;
}

/** An answer outside the contract is a broken dependency: the schema's own 4xx codes are meant for clients' input. */
function parseAnswer<T>(schema: Schema<T>, answer: unknown): T {
  try {
    return schema.parse(answer);
  } catch {
    throw new ApiError('bad_gateway', 'The conversation service answered with an invalid response.');
  }
}

export function conversationDirectory(client: InternalClient): ConversationDirectory {
  return {
    async messageStates(applicationId, messageRefs, requestId) {
      if (messageRefs.length === 0) return [];
      const contract = conversationInternal.messageStates;
      const body = { messageRefs: [...new Set(messageRefs)] };
      return parseAnswer(contract.response, await client.call(contract.method, contract.path, { applicationId, requestId, body })).messages;
    },
    async views(applicationId, { messageRefs, threadRefs, linkBase }, requestId) {
      if (messageRefs.length === 0 && threadRefs.length === 0) return { messages: [], threads: [] };
      const contract = conversationInternal.views;
      const body = { messageRefs: [...new Set(messageRefs)], threadRefs: [...new Set(threadRefs)], linkBase };
      return parseAnswer(contract.response, await client.call(contract.method, contract.path, { applicationId, requestId, body }));
    },
    async excerpt(applicationId, messageRef, requestId) {
      const contract = conversationInternal.excerpt;
      return parseAnswer(contract.response, await client.call(contract.method, contract.path, { applicationId, requestId, body: { messageRef } }));
    },
  };
}
