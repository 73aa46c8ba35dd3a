/**
 * The `thread-message-added` event: built after the message's transaction committed, from the
 * same views as GET message and GET thread, so that receivers see this server's REST objects.
 */
import { clientUserData } from '@collab/shared';
import { messagesRepository } from '../../repositories/messages.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import { messageViews, type ViewOptions } from '../messages/message-views.js';
import { threadViews } from '../threads/thread-views.js';
import type { Recipient } from './recipients.js';

/** A new message and the users it notifies, as its outbox entry recorded them. */
export interface AddedMessage {
  /** The message's internal id. */
  messageId: string;
  recipients: readonly Recipient[];
}

/**
 * The events' payloads of several new messages of one application, built together (one read of
 * the messages, their threads, their views and the users they name), keyed by message internal id.
 * A message that is gone (deleted, or being purged with its thread, group, author or application)
 * has none: no event is built from data being deleted.
 */
export async function threadMessageAddedPayloads(
  ctx: ConversationContext,
  applicationId: string,
  added: readonly AddedMessage[],
  view: ViewOptions,
  requestId: string,
): Promise<Map<string, Record<string, unknown>>> {
  const messages = await messagesRepository.findByInternalIds(
    ctx.db,
    applicationId,
    added.map((message) => message.messageId),
  );
  if (messages.length === 0) return new Map();
  const threads = await threadsRepository.findByInternalIds(
    ctx.db,
    applicationId,
    messages.map((message) => message.threadRef),
  );
  const threadsById = new Map(threads.map((thread) => [thread.internalId, thread]));
  const live = messages.filter((message) => threadsById.has(message.threadRef));
  const recipientsOf = new Map(added.map((message) => [message.messageId, message.recipients]));
  const userIds = live.flatMap((message) => [message.authorId, ...recipientsOf.get(message.internalId)!.map((recipient) => recipient.userId)]);
  const [messageViewList, threadViewList, { users }] = await Promise.all([
    messageViews(ctx.db, live, threadsById, view),
    threadViews(ctx.db, ctx.identity, applicationId, threads, requestId),
    ctx.identity.lookup(applicationId, { userIds: [...new Set(userIds)] }, requestId),
  ]);
  const threadViewById = new Map(threads.map((thread, index) => [thread.internalId, threadViewList[index]]));
  const payloads = new Map<string, Record<string, unknown>>();
  live.forEach((message, index) => {
    const thread = threadsById.get(message.threadRef)!;
    const messageView = messageViewList[index];
    const author = clientUserData(message.authorId, users.get(message.authorId));
    payloads.set(message.internalId, {
      threadID: thread.externalId,
      messageID: message.externalId,
      orgID: thread.groupId,
      organizationID: thread.groupId,
      groupID: thread.groupId,
      applicationID: applicationId,
      projectID: applicationId,
      author,
      // The original sent mention nodes here with its internal user ids; the message's own content
      // (with the customer's ids) is what a receiver can use.
      content: messageView.content,
      plaintext: messageView.plaintext,
      url: messageView.url,
      messageType: message.type,
      metadata: message.metadata,
      message: { ...messageView, author },
      thread: threadViewById.get(thread.internalId),
      usersToNotify: recipientsOf.get(message.internalId)!.map((recipient) => ({
        ...clientUserData(recipient.userId, users.get(recipient.userId)),
        replyActions: recipient.replyActions,
      })),
    });
  });
  return payloads;
}
