/** Creating a message, and with it its thread when asked to. */
import { randomUUID } from 'node:crypto';
import { ApiError, isIdentifier, mentionedUserIds, type RecordWrite } from '@collab/shared';
import type { MessageRef, ThreadRef, ThreadRow } from '../../entities/index.js';
import { attachmentsRepository } from '../../repositories/attachments.repository.js';
import { mentionsRepository } from '../../repositories/mentions.repository.js';
import { messagesRepository, type NewMessage } from '../../repositories/messages.repository.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { reactionsRepository } from '../../repositories/reactions.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import { eventsOutbox, type MessageAdded } from '../events/outbox.js';
import { replyRecipients, threadActionRecipients } from '../events/recipients.js';
import { creationGroupId, insertThread, requireThread, threadNotFound } from '../threads/threads.js';
import { insertActionMessage } from './action-messages.js';
import {
  checkAttachments,
  checkMentions,
  checkReactionLengths,
  checkReactionUsers,
  MESSAGE_ID_CONSTRAINT,
  reactionRows,
  violatedConstraint,
} from './checks.js';
import { messageColumnsFrom, type MessageCreationInput } from './message-keys.js';

/**
 * POST /v1/threads/<ID>/messages. Checks in this order, the first failing one answering: the thread
 * (unknown without createThread: 404; a new thread's id not an identifier: 400), the message id not
 * taken (409), the group (401), the author (unknown 401, not a member 400), content, attachments,
 * reactions.
 */
export async function createMessage(
  ctx: ConversationContext,
  applicationId: string,
  threadId: string,
  input: MessageCreationInput,
  options: { requestId: string; linkBase: string; recordWrite: RecordWrite<string> },
): Promise<string> {
  const { requestId, linkBase } = options;
  const existing = await threadsRepository.find(ctx.db, applicationId, threadId);
  if (!existing && !input.createThread) throw threadNotFound(threadId);
  if (!existing && !isIdentifier(threadId))
    throw new ApiError('invalid_field', 'Input type for threadID is not valid, expected identifier.');
  if (input.id !== undefined && (await messagesRepository.exists(ctx.db, applicationId, input.id)))
    throw new ApiError('message_already_exists', `Message ${input.id} already exists.`);
  const { groupId, subscribers, lookup, author, mentioned, fileIds } = await checkCreation(ctx, applicationId, existing, input, requestId);

  const messageId = input.id ?? `cord:${randomUUID()}`;
  const now = new Date();
  const createdAt = input.createdTimestamp ?? now;
  try {
    await ctx.db.transaction(async (tx) => {
      let thread: ThreadRow;
      let createdThread = false;
      if (existing) thread = await requireThread(tx, applicationId, threadId, true);
      else {
        const creatorSubscribes = input.subscribeToThread !== false ? [input.authorID] : [];
        ({ thread, created: createdThread } = await insertThread(
          tx,
          applicationId,
          threadId,
          input.createThread!,
          groupId,
          [...creatorSubscribes, ...subscribers.filter(lookup.isMember)],
        ));
      }
      // Who the message notifies is decided by the subscribers before it subscribes anyone, and
      // whether it starts the thread by the messages before it: the insert's statement reads both,
      // unless a reopen's action message goes in first (then they are read before that).
      const reopening = thread.resolvedAt !== null && !createdThread;
      const beforeReopen = reopening ? await participantsRepository.beforeNewMessage(tx, thread.internalId) : null;
      const events: MessageAdded[] = [];
      const added = (message: MessageRef, recipients: MessageAdded['payload']['recipients']): MessageAdded => ({
        topic: 'message.added',
        applicationId,
        requestId,
        payload: { messageId: message, linkBase, recipients },
      });
      // A new message reopens a resolved thread, with an action message 1 ms before it.
      if (beforeReopen) {
        await threadsRepository.update(tx, applicationId, thread.internalId, { resolvedAt: null });
        const action = await insertActionMessage(tx, applicationId, thread.internalId, author, 'reopened', new Date(createdAt.getTime() - 1));
        events.push(added(action.internalId, threadActionRecipients(input.authorID, beforeReopen.subscribers)));
      }
      const message = await messagesRepository.insertWithActivity(tx, applicationId, newMessageRow(input, messageId, thread.internalId, createdAt));
      const subscribedBefore = beforeReopen?.subscribers ?? message.subscribersBefore;
      const startsThread = createdThread || !(beforeReopen?.hasMessages ?? message.hadMessages);
      await reactionsRepository.add(tx, message.internalId, reactionRows(input.addReactions ?? [], now));
      await attachmentsRepository.attach(tx, message.internalId, fileIds);
      await mentionsRepository.add(tx, message.internalId, mentioned);
      await participantsRepository.subscribe(tx, thread.internalId, mentioned.filter(lookup.isMember), true);
      events.push(
        added(
          message.internalId,
          replyRecipients({ authorId: input.authorID, mentioned, subscribers: subscribedBefore, hasFiles: fileIds.length > 0, startsThread }),
        ),
      );
      // The reopen's event first: receivers get a thread's events in the order of its messages.
      // With them, in the same round trip: the author has seen the thread and is subscribed
      // (`subscribeToThread: false` leaves the subscription as it was).
      const authorSeen = participantsRepository.markSeenWrite(thread.internalId, [input.authorID], input.subscribeToThread !== false);
      await eventsOutbox.record(tx, events, { alongside: authorSeen });
      // The request's answer, stored with the message (Idempotency-Key).
      await options.recordWrite(tx, messageId);
    });
  } catch (error) {
    // A concurrent create took the id between the check and the write: the same answer as the check's.
    if (violatedConstraint(error) === MESSAGE_ID_CONSTRAINT)
      throw new ApiError('message_already_exists', `Message ${messageId} already exists.`);
    throw error;
  }
  // Its link previews cost this request nothing: the relay queues them from its message.added entry.
  return messageId;
}

/** The checks of a creation after the thread and the message id, in the order of createMessage's. */
async function checkCreation(ctx: ConversationContext, applicationId: string, existing: ThreadRow | null, input: MessageCreationInput, requestId: string) {
  const groupId = existing ? existing.groupId : creationGroupId(input.createThread!, 'createThread.');
  const reactionUsers = (input.addReactions ?? []).map((item) => item.userID);
  const subscribers = existing ? [] : (input.createThread!.addSubscribers ?? []);
  const lookup = await ctx.identity.lookup(
    applicationId,
    { userIds: [input.authorID, ...mentionedUserIds(input.content), ...reactionUsers, ...subscribers], groupId },
    requestId,
  );
  if (!lookup.group) throw new ApiError('organization_not_found', `Group ${groupId} not found.`);
  const author = lookup.users.get(input.authorID);
  if (!author) throw new ApiError('user_not_found', `Invalid message sender user id: ${input.authorID}.`);
  if (!lookup.isMember(input.authorID))
    throw new ApiError('invalid_request', 'message author is not a member of the organization the thread belongs to');
  const mentioned = checkMentions(lookup, input.content);
  const fileIds = await checkAttachments(ctx.db, applicationId, input.authorID, input.addAttachments ?? []);
  checkReactionUsers(lookup, groupId, reactionUsers);
  checkReactionLengths(input.addReactions ?? []);
  return { groupId, subscribers, lookup, author, mentioned, fileIds };
}

/** The message row a creation stores: the columns given (the others take their defaults), in its thread, with its id and time. */
function newMessageRow(input: MessageCreationInput, externalId: string, thread: ThreadRef, createdAt: Date): NewMessage {
  return { ...messageColumnsFrom(input), externalId, threadRef: thread, authorId: input.authorID, content: input.content, createdAt };
}
