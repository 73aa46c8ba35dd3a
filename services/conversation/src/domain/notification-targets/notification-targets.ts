/**
 * What the notification service shows of the messages and threads its notifications point at:
 * whether they are still there, and their REST objects. Named by internal reference, which a PUT
 * never changes.
 */
import { ApiError, type ConversationViews, type MessageExcerpt, type MessageStates } from '@collab/shared';
import { messagesRepository } from '../../repositories/messages.repository.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { reactionsRepository } from '../../repositories/reactions.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import { createMessage } from '../messages/create-message.js';
import { groupBy, messageViews } from '../messages/message-views.js';
import { threadViews } from '../threads/thread-views.js';

/** An internal reference as this service writes them (a bigint); anything else names nothing. */
const REF = /^[1-9]\d{0,17}$/;
const validRefs = (refs: readonly string[]) => refs.filter((ref) => REF.test(ref));

/**
 * The messages that exist (with their thread), whether each is soft-deleted, and their reactions.
 * The notification service asks this about every message a user's notifications name, on every
 * list: it reads only the state, never the messages' content.
 */
export async function messageStates(ctx: ConversationContext, applicationId: string, messageRefs: readonly string[]): Promise<MessageStates> {
  const messages = await messagesRepository.states(ctx.db, applicationId, validRefs(messageRefs));
  const reactions = await reactionsRepository.ofMessages(ctx.db, messages.map((message) => message.internalId));
  const reactionsByMessage = groupBy(reactions, (reaction) => reaction.messageRef);
  return messages.map((message) => ({
    ref: message.internalId,
    deleted: message.deleted,
    reactions: (reactionsByMessage.get(message.internalId) ?? []).map(({ userId, reaction }) => ({ userID: userId, reaction })),
  }));
}

/** GET message and GET thread objects of those that exist; file links under `linkBase`. */
export async function notificationViews(
  ctx: ConversationContext,
  applicationId: string,
  request: { messageRefs: readonly string[]; threadRefs: readonly string[]; linkBase: string },
  requestId: string,
): Promise<ConversationViews> {
  const found = await messagesRepository.findByInternalIds(ctx.db, applicationId, validRefs(request.messageRefs));
  const threadRefs = validRefs(request.threadRefs);
  const threads = await threadsRepository.findByInternalIds(ctx.db, applicationId, [
    ...threadRefs,
    ...found.map((message) => message.threadRef),
  ]);
  const threadsById = new Map(threads.map((thread) => [thread.internalId, thread]));
  // A thread deleted between the two reads takes its messages with it.
  const messages = found.filter((message) => threadsById.has(message.threadRef));
  const asked = new Set(threadRefs);
  const askedThreads = threads.filter((thread) => asked.has(thread.internalId));
  const [messageObjects, threadObjects] = await Promise.all([
    messageViews(ctx.db, messages, threadsById, { linkBase: request.linkBase, fileUrlSecret: ctx.files.urlSecret }),
    threadViews(ctx.db, ctx.identity, applicationId, askedThreads, requestId),
  ]);
  return {
    messages: messages.map((message, index) => ({
      ref: message.internalId,
      id: messageObjects[index].id,
      threadID: messageObjects[index].threadID,
      view: messageObjects[index],
    })),
    threads: askedThreads.map((thread, index) => ({ ref: thread.internalId, name: thread.name, view: threadObjects[index] })),
  };
}

/** A mail's unsubscribe link: the user stops following the thread. False when the thread is gone. */
export async function unsubscribeFromThread(ctx: ConversationContext, applicationId: string, threadRef: string, userId: string): Promise<boolean> {
  const [thread] = await threadsRepository.findByInternalIds(ctx.db, applicationId, validRefs([threadRef]));
  if (!thread) return false;
  await participantsRepository.unsubscribe(ctx.db, thread.internalId, [userId]);
  return true;
}

/** What a mail shows before a message: see conversationInternal.excerpt. */
export async function messageExcerpt(ctx: ConversationContext, applicationId: string, messageRef: string): Promise<MessageExcerpt> {
  const [ref] = validRefs([messageRef]);
  return (ref && (await messagesRepository.excerpt(ctx.db, applicationId, ref))) || { earlierCount: 0, first: null, previous: null };
}

/**
 * A reply by mail as a message of the user in the thread (original-extras §5.8): one paragraph per
 * entry, as any new message is checked and notified, leaving the user's subscription as it was.
 * Null when the thread is gone.
 */
export async function postReply(
  ctx: ConversationContext,
  applicationId: string,
  reply: { threadRef: string; userId: string; messageID: string; paragraphs: readonly string[] },
  options: { requestId: string; linkBase: string },
): Promise<string | null> {
  const [thread] = await threadsRepository.findByInternalIds(ctx.db, applicationId, validRefs([reply.threadRef]));
  if (!thread) return null;
  const content = reply.paragraphs.map((text) => ({ type: 'p' as const, children: [{ text }] }));
  const input = { id: reply.messageID, authorID: reply.userId, content, subscribeToThread: false };
  try {
    return await createMessage(ctx, applicationId, thread.externalId, input, { ...options, recordWrite: async () => {} });
  } catch (error) {
    // Posted by an earlier delivery of the same reply: that one is the answer.
    if (error instanceof ApiError && error.code === 'message_already_exists') return reply.messageID;
    throw error;
  }
}
