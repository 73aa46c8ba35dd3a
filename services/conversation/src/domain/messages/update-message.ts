/** Updating a message: its fields, reactions, attachments, link previews and mentions. */
import { ApiError, isIdentifier, isUuid, mentionedUserIds, type Queryable } from '@collab/shared';
import type { MessageRef, MessageRow, ThreadRow } from '../../entities/index.js';
import { attachmentsRepository } from '../../repositories/attachments.repository.js';
import { linkPreviewsRepository } from '../../repositories/link-previews.repository.js';
import { mentionsRepository } from '../../repositories/mentions.repository.js';
import { messagesRepository, type MessageFields } from '../../repositories/messages.repository.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { reactionsRepository } from '../../repositories/reactions.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import { eventsOutbox, type ConversationEvent } from '../events/outbox.js';
import { mentionRecipients } from '../events/recipients.js';
import { keepPreviewsOf } from '../link-previews/link-previews.js';
import { requireThread } from '../threads/threads.js';
import {
  bareFileId,
  checkAttachments,
  checkMentions,
  checkReactionLengths,
  checkReactionUsers,
  MESSAGE_ID_CONSTRAINT,
  reactionRows,
  requireMessageInThread,
  sameJson,
  violatedConstraint,
} from './checks.js';
import { messageColumnsFrom, type MessageUpdateInput } from './message-keys.js';

/**
 * PUT /v1/threads/<tID>/messages/<mID>. Checks in this order, the first failing one answering: the
 * thread (404), the message in it (404), a new id (not an identifier 400, taken 409), a new author
 * (unknown 401; membership is not checked), content, reactions, attachments.
 */
export async function updateMessage(
  ctx: ConversationContext,
  applicationId: string,
  threadId: string,
  messageId: string,
  input: MessageUpdateInput,
  requestId: string,
  linkBase: string,
): Promise<void> {
  const thread = await requireThread(ctx.db, applicationId, threadId);
  const message = await requireMessageInThread(ctx.db, applicationId, thread, messageId);
  const { lookup, mentioned, fileIds } = await checkUpdate(ctx, applicationId, thread, message, input, requestId);
  const now = new Date();
  const fields = updatedFields(input, message, now);
  // Changing the content or skipLinkPreviews applies the link-preview rule at once (keepPreviewsOf).
  const changesPreviews =
    (input.content !== undefined && !sameJson(input.content, message.content)) ||
    (input.skipLinkPreviews !== undefined && input.skipLinkPreviews !== message.skipLinkPreviews);

  try {
    await ctx.db.transaction(async (tx) => {
      const current = await requireMessageInThread(tx, applicationId, thread, messageId, true);
      const reactedBefore = new Set((await reactionsRepository.of(tx, current.internalId)).map(({ userId, reaction }) => reactionKey(userId, reaction)));
      await messagesRepository.update(tx, applicationId, current.internalId, fields);
      const previewUrls = changesPreviews ? await keepPreviewsOf(tx, { ...current, ...fields }) : [];
      await writeReactionsAndAttachments(tx, current.internalId, input, fileIds, now);
      const newlyMentioned = mentioned ? new Set(await mentionsRepository.replace(tx, current.internalId, mentioned)) : new Set<string>();
      if (mentioned) await participantsRepository.subscribe(tx, thread.internalId, mentioned.filter(lookup.isMember), true);
      if (fields.createdAt !== undefined) await threadsRepository.refreshActivity(tx, applicationId, thread.internalId);

      // What the edit notifies, decided with the message locked: its (new) author is told of each
      // reaction it did not have, by someone else; users mentioned for the first time get a reply.
      const author = fields.authorId ?? current.authorId;
      const entry = { applicationId, requestId };
      const ofMessage = { messageId: current.internalId, linkBase };
      const events: ConversationEvent[] = newReactions(input.addReactions ?? [], author, reactedBefore).map(({ userID, reaction }) => ({
        ...entry,
        topic: 'reaction.added',
        payload: { ...ofMessage, authorId: author, userId: userID, reaction },
      }));
      const recipients = mentionRecipients({
        authorId: author,
        newlyMentioned: (mentioned ?? []).filter((userId) => newlyMentioned.has(userId)),
        hasFiles: newlyMentioned.size > 0 && (await attachmentsRepository.of(tx, [current.internalId])).length > 0,
      });
      if (recipients.length > 0) events.push({ ...entry, topic: 'message.mentioned', payload: { ...ofMessage, recipients } });
      // Recorded, not queued from here: a job Redis cannot take now is queued by the relay once it can.
      if (previewUrls.length > 0 && ctx.linkPreviews.enabled)
        events.push({ ...entry, topic: 'message.links-changed', payload: { messageId: current.internalId } });
      await eventsOutbox.record(tx, events);
    });
  } catch (error) {
    // Races with a concurrent update: the new id was taken, or the file attached, meanwhile.
    const constraint = violatedConstraint(error);
    if (constraint === MESSAGE_ID_CONSTRAINT) throw new ApiError('message_already_exists', `Message ${input.id} already exists.`);
    if (constraint !== null) throw new ApiError('invalid_field', 'Cannot attach an already-attached file');
    throw error;
  }
}

const reactionKey = (userId: string, reaction: string) => `${userId}\u0000${reaction}`;
const attachmentKey = (item: { type: string; id: string }) => `${item.type}\u0000${bareFileId(item.id).toLowerCase()}`;

/** The update's checks after the thread and message were found, in the order of updateMessage's. */
async function checkUpdate(ctx: ConversationContext, applicationId: string, thread: ThreadRow, message: MessageRow, input: MessageUpdateInput, requestId: string) {
  if (input.id !== undefined && input.id !== message.externalId) {
    if (!isIdentifier(input.id)) throw new ApiError('invalid_field', 'Input type for id is not valid, expected identifier.');
    if (await messagesRepository.exists(ctx.db, applicationId, input.id))
      throw new ApiError('message_already_exists', `Message ${input.id} already exists.`);
  }
  const addReactions = input.addReactions ?? [];
  const removeReactions = input.removeReactions ?? [];
  const removingReactions = new Set(removeReactions.map((item) => reactionKey(item.userID, item.reaction)));
  const addAttachments = input.addAttachments ?? [];
  const removingAttachments = new Set((input.removeAttachments ?? []).map(attachmentKey));

  const reactionUsers = [...addReactions, ...removeReactions].map((item) => item.userID);
  const lookup = await ctx.identity.lookup(
    applicationId,
    {
      userIds: [...(input.authorID ? [input.authorID] : []), ...(input.content ? mentionedUserIds(input.content) : []), ...reactionUsers],
      groupId: thread.groupId,
    },
    requestId,
  );
  if (input.authorID !== undefined && !lookup.users.has(input.authorID))
    throw new ApiError('user_not_found', `Invalid message author id: ${input.authorID}.`);
  const mentioned = input.content ? checkMentions(lookup, input.content) : null;
  if (addReactions.some((item) => removingReactions.has(reactionKey(item.userID, item.reaction))))
    throw new ApiError('invalid_field', 'Adding and removing the same reaction is invalid.');
  checkReactionUsers(lookup, thread.groupId, reactionUsers);
  checkReactionLengths(addReactions);
  if (addAttachments.some((item) => removingAttachments.has(attachmentKey(item))))
    throw new ApiError('invalid_field', 'Adding and removing the same attachment is invalid.');
  const authorId = input.authorID ?? message.authorId;
  const fileIds = await checkAttachments(ctx.db, applicationId, authorId, addAttachments);
  const attached = new Set<string>((await attachmentsRepository.of(ctx.db, [message.internalId])).map((file) => file.id));
  if (fileIds.some((id) => attached.has(id))) throw new ApiError('invalid_field', 'Cannot attach an already-attached file');
  return { lookup, mentioned, fileIds };
}

/** The message columns the update sets: those the request gives, and what its content and `deleted` imply. */
function updatedFields(input: MessageUpdateInput, message: MessageRow, now: Date): MessageFields {
  const fields = messageColumnsFrom(input);
  // A null extraClassnames leaves the classes as they are.
  if (input.extraClassnames === null) delete fields.extraClassnames;
  // Changed content shows as edited unless the caller sets updatedTimestamp itself.
  if (input.content !== undefined && input.updatedTimestamp === undefined && !sameJson(input.content, message.content)) fields.updatedAt = now;
  if (input.deletedTimestamp === undefined && input.deleted !== undefined) fields.deletedAt = input.deleted ? now : null;
  return fields;
}

/** Adds and removes the reactions, attachments and link previews the update names. */
async function writeReactionsAndAttachments(tx: Queryable, message: MessageRef, input: MessageUpdateInput, fileIds: string[], now: Date): Promise<void> {
  const removeAttachments = input.removeAttachments ?? [];
  await reactionsRepository.add(tx, message, reactionRows(input.addReactions ?? [], now));
  await reactionsRepository.remove(
    tx,
    message,
    (input.removeReactions ?? []).map((item) => ({ userId: item.userID, reaction: item.reaction })),
  );
  await attachmentsRepository.attach(tx, message, fileIds);
  await attachmentsRepository.detach(
    tx,
    message,
    removeAttachments
      .filter((item) => item.type === 'file')
      .map((item) => bareFileId(item.id).toLowerCase())
      .filter(isUuid),
  );
  await linkPreviewsRepository.hide(
    tx,
    message,
    removeAttachments.filter((item) => item.type === 'link_preview').map((item) => item.id),
  );
}

/** The added reactions the author is told of: each one once, not the author's own, not one the message already had. */
function newReactions(added: readonly { userID: string; reaction: string }[], author: string, before: ReadonlySet<string>) {
  const seen = new Set<string>();
  return added.filter(({ userID, reaction }) => {
    const key = reactionKey(userID, reaction);
    if (userID === author || before.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
