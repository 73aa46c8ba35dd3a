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

/**
 * The event's payload, or null when the message is gone (deleted, or being purged with its
 * thread, group, author or application): no event is built from data being deleted.
 */
export async function threadMessageAddedPayload(
  ctx: ConversationContext,
  applicationId: string,
  messageInternalId: string,
  recipients: readonly Recipient[],
  view: ViewOptions,
  requestId: string,
): Promise<Record<string, unknown> | null> {
  const message = await messagesRepository.findByInternalId(ctx.db, applicationId, messageInternalId);
  if (!message) return null;
  const [thread] = await threadsRepository.findByInternalIds(ctx.db, applicationId, [message.threadId]);
  if (!thread) return null;
  const [[messageView], [threadView], { users }] = await Promise.all([
    messageViews(ctx.db, [message], new Map([[thread.internalId, thread]]), view),
    threadViews(ctx.db, ctx.identity, applicationId, [thread], requestId),
    ctx.identity.lookup(applicationId, { userIds: [message.authorId, ...recipients.map((recipient) => recipient.userId)] }, requestId),
  ]);
  const author = clientUserData(message.authorId, users.get(message.authorId));
  return {
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
    thread: threadView,
    usersToNotify: recipients.map((recipient) => ({
      ...clientUserData(recipient.userId, users.get(recipient.userId)),
      replyActions: recipient.replyActions,
    })),
  };
}
