/** Message use cases (behavior.md §12, decisions.md 25, 28, 29). */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  checkContentStructure,
  isIdentifier,
  isUuid,
  mentionedUserIds,
  pageCursors,
  type CursorOf,
  type FlatJson,
  type MessageNode,
  type RecordWrite,
} from '@collab/shared';
import type { ThreadRow } from '../../entities/index.js';
import type { Db } from '../../repositories/db.js';
import { isUniqueViolation } from '../../repositories/db.js';
import { attachmentsRepository } from '../../repositories/attachments.repository.js';
import { filesRepository } from '../../repositories/files.repository.js';
import { linkPreviewsRepository } from '../../repositories/link-previews.repository.js';
import { mentionsRepository } from '../../repositories/mentions.repository.js';
import { messagesRepository, type MessageFields } from '../../repositories/messages.repository.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { reactionsRepository } from '../../repositories/reactions.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import type { Lookup } from '../identity-directory.js';
import { creationGroupId, insertThread, requireThread, threadNotFound, type ThreadCreation } from '../threads/threads.js';
import { eventsOutbox, type ConversationEvent, type MessageAdded } from '../events/outbox.js';
import { mentionRecipients, replyRecipients, threadActionRecipients } from '../events/recipients.js';
import { keepPreviewsOf } from '../link-previews/link-previews.js';
import { insertActionMessage } from './action-messages.js';
import { messageViews, type ViewOptions } from './message-views.js';

interface ReactionInput {
  reaction: string;
  userID: string;
  timestamp?: Date;
}

interface MessageFieldsInput {
  type?: 'action_message' | 'user_message';
  createdTimestamp?: Date;
  iconURL?: string | null;
  metadata?: FlatJson;
  url?: string | null;
  updatedTimestamp?: Date | null;
  deletedTimestamp?: Date | null;
  translationKey?: string | null;
  extraClassnames?: string | null;
  skipLinkPreviews?: boolean;
  addReactions?: ReactionInput[];
  addAttachments?: { type: 'file'; id: string }[];
}

export interface MessageCreation extends MessageFieldsInput {
  authorID: string;
  content: MessageNode[];
  id?: string;
  subscribeToThread?: boolean;
  createThread?: ThreadCreation;
}

export interface MessageUpdate extends MessageFieldsInput {
  id?: string;
  authorID?: string;
  content?: MessageNode[];
  removeReactions?: { reaction: string; userID: string }[];
  removeAttachments?: { type: 'file' | 'link_preview'; id: string }[];
  deleted?: boolean;
}

/** The unique constraint a write violated, or null (pg error, possibly wrapped by TypeORM). */
function violatedConstraint(error: unknown): string | null {
  if (!isUniqueViolation(error)) return null;
  const wrapped = error as { constraint?: string; driverError?: { constraint?: string } };
  return wrapped.constraint ?? wrapped.driverError?.constraint ?? '';
}
const MESSAGE_ID_CONSTRAINT = 'messages_application_external_id_key';

function messageNotFound(messageId: string): ApiError {
  return new ApiError('message_not_found', `Could not find message with ID ${messageId}`);
}

/** A file id as clients send it back: `cord:<uuid>` (what we return) or the bare uuid. */
function bareFileId(id: string): string {
  return id.startsWith('cord:') ? id.slice('cord:'.length) : id;
}

/** The content check (behavior.md §12.2): structure first, then mentioned users must exist (any group, any status). */
function checkMentions(lookup: Lookup, content: readonly MessageNode[]): string[] {
  checkContentStructure(content);
  const mentioned = mentionedUserIds(content);
  const unknown = mentioned.find((id) => !lookup.users.has(id));
  if (unknown !== undefined) throw new ApiError('invalid_field', `content field is invalid: Could not find mentioned user with ID ${unknown}`);
  return mentioned;
}

/** Reaction users must exist and be active members of the thread's group (api.md, decisions.md 29). */
function checkReactionUsers(lookup: Lookup, groupId: string, userIds: readonly string[]): void {
  for (const userId of userIds) {
    const user = lookup.users.get(userId);
    if (!user) throw new ApiError('user_not_found', `User with ID ${userId} does not exist.`);
    if (!lookup.isMember(userId) || user.status !== 'active')
      throw new ApiError('user_not_in_organization', `User with ID '${userId}' does not belong in organization ${groupId}.`);
  }
}

/**
 * A reaction is at most 127 UTF-16 code units (behavior.md §6.5); the schema counts code points,
 * so an emoji-only reaction can pass it at twice the length.
 */
function checkReactionLengths(items: readonly ReactionInput[]): void {
  if (items.some((item) => item.reaction.length > MAX_REACTION_LENGTH))
    throw new ApiError('invalid_field', `Reaction is too long, must be less than ${MAX_REACTION_LENGTH} characters`);
}
const MAX_REACTION_LENGTH = 127;

/** Equal JSON values, whatever the order of object keys (stored content comes back from jsonb reordered). */
function sameJson(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => sameJson(item, b[index]));
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const keysA = Object.keys(a);
    const keysB = Object.keys(b);
    return (
      keysA.length === keysB.length &&
      keysA.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
    );
  }
  return a === b;
}

/** Files to attach: no duplicates, all uploaded, all owned by the author (behavior.md §12.5). */
async function checkAttachments(db: Db, applicationId: string, authorId: string, items: readonly { id: string }[]): Promise<string[]> {
  // UUIDs compare case-insensitively: `cord:<uuid>`, the bare UUID and its upper-case form are one file.
  const ids = items.map((item) => bareFileId(item.id).toLowerCase());
  if (new Set(ids).size !== ids.length) throw new ApiError('invalid_field', 'Cannot attach the same file multiple times');
  const files = await filesRepository.findMany(db, applicationId, ids.filter(isUuid));
  for (const id of ids) {
    const file = files.find((candidate) => candidate.id === id);
    if (!file) throw new ApiError('file_not_found', `File ${id} not found.`);
    if (file.ownerId !== authorId) throw new ApiError('file_belongs_to_different_user');
  }
  return ids;
}

function reactionRows(items: readonly ReactionInput[], now: Date) {
  return items.map((item) => ({
    userId: item.userID,
    reaction: item.reaction,
    at: item.timestamp ?? now,
    explicitTime: item.timestamp !== undefined,
  }));
}

/** POST /v1/threads/<ID>/messages, checks in the reference's order (behavior.md §12.7). */
export async function createMessage(
  ctx: ConversationContext,
  applicationId: string,
  threadId: string,
  input: MessageCreation,
  options: { requestId: string; linkBase: string; recordWrite: RecordWrite<string> },
): Promise<string> {
  const { requestId, linkBase } = options;
  const existing = await threadsRepository.find(ctx.db, applicationId, threadId);
  if (!existing && !input.createThread) throw threadNotFound(threadId);
  if (!existing && !isIdentifier(threadId))
    throw new ApiError('invalid_field', 'Input type for threadID is not valid, expected identifier.');
  if (input.id !== undefined && (await messagesRepository.exists(ctx.db, applicationId, input.id)))
    throw new ApiError('message_already_exists', `Message ${input.id} already exists.`);

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
      // Who the message notifies is decided by the subscribers before it subscribes anyone.
      const { subscribers: subscribedBefore, hasMessages } = await participantsRepository.beforeNewMessage(tx, thread.internalId);
      const startsThread = createdThread || !hasMessages;
      const events: MessageAdded[] = [];
      const added = (messageInternalId: string, recipients: MessageAdded['payload']['recipients']): MessageAdded => ({
        topic: 'message.added',
        applicationId,
        requestId,
        payload: { messageId: messageInternalId, linkBase, recipients },
      });
      // A new message reopens a resolved thread, with an action message just before it (§12.7).
      if (thread.resolvedAt !== null && !createdThread) {
        await threadsRepository.update(tx, applicationId, thread.internalId, { resolvedAt: null });
        const action = await insertActionMessage(tx, applicationId, thread.internalId, author, 'reopened', new Date(createdAt.getTime() - 1));
        events.push(added(action.internalId, threadActionRecipients(input.authorID, subscribedBefore)));
      }
      const message = await messagesRepository.insertWithActivity(tx, applicationId, {
        externalId: messageId,
        threadRef: thread.internalId,
        authorId: input.authorID,
        type: input.type ?? 'user_message',
        content: input.content,
        url: input.url ?? null,
        iconUrl: input.iconURL ?? null,
        translationKey: input.translationKey ?? null,
        extraClassnames: input.extraClassnames ?? null,
        metadata: input.metadata ?? {},
        skipLinkPreviews: input.skipLinkPreviews ?? false,
        createdAt,
        updatedAt: input.updatedTimestamp ?? null,
        deletedAt: input.deletedTimestamp ?? null,
      });
      await reactionsRepository.add(tx, message.internalId, reactionRows(input.addReactions ?? [], now));
      await attachmentsRepository.attach(tx, message.internalId, fileIds);
      await mentionsRepository.add(tx, message.internalId, mentioned);
      await participantsRepository.subscribe(tx, thread.internalId, mentioned.filter(lookup.isMember), true);
      // The author has seen the thread and is subscribed; `subscribeToThread: false` leaves the subscription as it was.
      await participantsRepository.markSeen(tx, thread.internalId, [input.authorID], input.subscribeToThread !== false);
      events.push(
        added(
          message.internalId,
          replyRecipients({ authorId: input.authorID, mentioned, subscribers: subscribedBefore, hasFiles: fileIds.length > 0, startsThread }),
        ),
      );
      // The reopen's event first: receivers get a thread's events in the order of its messages.
      await eventsOutbox.record(tx, events);
      // The request's answer, stored with the message (Idempotency-Key).
      await options.recordWrite(tx, messageId);
    });
  } catch (error) {
    // A concurrent create took the id between the check and the write (decisions.md 25).
    if (violatedConstraint(error) === MESSAGE_ID_CONSTRAINT)
      throw new ApiError('message_already_exists', `Message ${messageId} already exists.`);
    throw error;
  }
  // Its link previews cost this request nothing: the relay queues them from its message.added entry.
  return messageId;
}

async function requireMessageInThread(db: Db, applicationId: string, thread: ThreadRow, messageId: string, forUpdate = false) {
  const message = await messagesRepository.find(db, applicationId, messageId, forUpdate);
  if (!message || message.threadRef !== thread.internalId) throw messageNotFound(messageId);
  return message;
}

/** PUT /v1/threads/<tID>/messages/<mID>, checks in the reference's order (behavior.md §12.8). */
export async function updateMessage(
  ctx: ConversationContext,
  applicationId: string,
  threadId: string,
  messageId: string,
  input: MessageUpdate,
  requestId: string,
  linkBase: string,
): Promise<void> {
  const thread = await requireThread(ctx.db, applicationId, threadId);
  const message = await requireMessageInThread(ctx.db, applicationId, thread, messageId);
  if (input.id !== undefined && input.id !== message.externalId) {
    if (!isIdentifier(input.id)) throw new ApiError('invalid_field', 'Input type for id is not valid, expected identifier.');
    if (await messagesRepository.exists(ctx.db, applicationId, input.id))
      throw new ApiError('message_already_exists', `Message ${input.id} already exists.`);
  }
  const addReactions = input.addReactions ?? [];
  const removeReactions = input.removeReactions ?? [];
  const reactionKey = (item: { reaction: string; userID: string }) => `${item.userID}\u0000${item.reaction}`;
  const removingReactions = new Set(removeReactions.map(reactionKey));
  const addAttachments = input.addAttachments ?? [];
  const removeAttachments = input.removeAttachments ?? [];
  const attachmentKey = (item: { type: string; id: string }) => `${item.type}\u0000${bareFileId(item.id).toLowerCase()}`;
  const removingAttachments = new Set(removeAttachments.map(attachmentKey));

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
  if (addReactions.some((item) => removingReactions.has(reactionKey(item))))
    throw new ApiError('invalid_field', 'Adding and removing the same reaction is invalid.');
  checkReactionUsers(lookup, thread.groupId, reactionUsers);
  checkReactionLengths(addReactions);
  if (addAttachments.some((item) => removingAttachments.has(attachmentKey(item))))
    throw new ApiError('invalid_field', 'Adding and removing the same attachment is invalid.');
  const authorId = input.authorID ?? message.authorId;
  const fileIds = await checkAttachments(ctx.db, applicationId, authorId, addAttachments);
  const attached = new Set((await attachmentsRepository.of(ctx.db, [message.internalId])).map((file) => file.id));
  if (fileIds.some((id) => attached.has(id))) throw new ApiError('invalid_field', 'Cannot attach an already-attached file');

  const now = new Date();
  const fields: MessageFields = {};
  if (input.id !== undefined) fields.externalId = input.id;
  if (input.authorID !== undefined) fields.authorId = input.authorID;
  if (input.type !== undefined) fields.type = input.type;
  if (input.createdTimestamp !== undefined) fields.createdAt = input.createdTimestamp;
  if (input.iconURL !== undefined) fields.iconUrl = input.iconURL;
  if (input.metadata !== undefined) fields.metadata = input.metadata;
  if (input.url !== undefined) fields.url = input.url;
  if (input.translationKey !== undefined) fields.translationKey = input.translationKey;
  if (input.extraClassnames != null) fields.extraClassnames = input.extraClassnames;
  if (input.skipLinkPreviews !== undefined) fields.skipLinkPreviews = input.skipLinkPreviews;
  if (input.content !== undefined) {
    fields.content = input.content;
    // Changed content shows as edited unless the caller sets updatedTimestamp itself.
    if (input.updatedTimestamp === undefined && !sameJson(input.content, message.content))
      fields.updatedAt = now;
  }
  if (input.updatedTimestamp !== undefined) fields.updatedAt = input.updatedTimestamp;
  if (input.deletedTimestamp !== undefined) fields.deletedAt = input.deletedTimestamp;
  else if (input.deleted !== undefined) fields.deletedAt = input.deleted ? now : null;
  // Changing the content or skipLinkPreviews applies the link-preview rule at once (keepPreviewsOf).
  const changesPreviews =
    (input.content !== undefined && !sameJson(input.content, message.content)) ||
    (input.skipLinkPreviews !== undefined && input.skipLinkPreviews !== message.skipLinkPreviews);

  try {
    await ctx.db.transaction(async (tx) => {
      const current = await requireMessageInThread(tx, applicationId, thread, messageId, true);
      const reactedBefore = new Set(
        (await reactionsRepository.of(tx, current.internalId)).map(({ userId, reaction }) => reactionKey({ userID: userId, reaction })),
      );
      await messagesRepository.update(tx, applicationId, current.internalId, fields);
      const previewUrls = changesPreviews ? await keepPreviewsOf(tx, { ...current, ...fields }) : [];
      await reactionsRepository.add(tx, current.internalId, reactionRows(addReactions, now));
      await reactionsRepository.remove(
        tx,
        current.internalId,
        removeReactions.map((item) => ({ userId: item.userID, reaction: item.reaction })),
      );
      await attachmentsRepository.attach(tx, current.internalId, fileIds);
      await attachmentsRepository.detach(
        tx,
        current.internalId,
        removeAttachments
          .filter((item) => item.type === 'file')
          .map((item) => bareFileId(item.id).toLowerCase())
          .filter(isUuid),
      );
      await linkPreviewsRepository.hide(
        tx,
        current.internalId,
        removeAttachments.filter((item) => item.type === 'link_preview').map((item) => item.id),
      );
      const newlyMentioned = mentioned ? new Set(await mentionsRepository.replace(tx, current.internalId, mentioned)) : new Set<string>();
      if (mentioned) await participantsRepository.subscribe(tx, thread.internalId, mentioned.filter(lookup.isMember), true);
      if (fields.createdAt !== undefined) await threadsRepository.refreshActivity(tx, applicationId, thread.internalId);

      // What the edit notifies, decided with the message locked: its (new) author is told of each
      // reaction it did not have, by someone else; users mentioned for the first time get a reply.
      const author = fields.authorId ?? current.authorId;
      const entry = { applicationId, requestId };
      const ofMessage = { messageId: current.internalId, linkBase };
      const events: ConversationEvent[] = [];
      const reacted = new Set<string>();
      for (const { userID, reaction } of addReactions) {
        const key = reactionKey({ userID, reaction });
        if (userID === author || reactedBefore.has(key) || reacted.has(key)) continue;
        reacted.add(key);
        events.push({ ...entry, topic: 'reaction.added', payload: { ...ofMessage, authorId: author, userId: userID, reaction } });
      }
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

export async function deleteMessage(ctx: ConversationContext, applicationId: string, threadId: string, messageId: string) {
  const thread = await requireThread(ctx.db, applicationId, threadId);
  const message = await requireMessageInThread(ctx.db, applicationId, thread, messageId);
  await ctx.db.transaction(async (tx) => {
    await messagesRepository.delete(tx, applicationId, message.internalId);
    await threadsRepository.refreshActivity(tx, applicationId, thread.internalId);
  });
}

export async function getMessage(
  ctx: ConversationContext,
  applicationId: string,
  threadId: string,
  messageId: string,
  view: ViewOptions,
) {
  const thread = await requireThread(ctx.db, applicationId, threadId);
  const message = await requireMessageInThread(ctx.db, applicationId, thread, messageId);
  return (await messageViews(ctx.db, [message], new Map([[thread.internalId, thread]]), view))[0];
}

export async function listThreadMessages(
  ctx: ConversationContext,
  applicationId: string,
  threadId: string,
  direction: 'ascending' | 'descending',
  view: ViewOptions,
) {
  const thread = await requireThread(ctx.db, applicationId, threadId);
  const rows = await messagesRepository.inThread(ctx.db, applicationId, thread.internalId, direction);
  return messageViews(ctx.db, rows, new Map([[thread.internalId, thread]]), view);
}

export interface MessageListQuery {
  limit: number;
  token: CursorOf<typeof pageCursors.messages> | null;
  filter: {
    metadata?: FlatJson;
    location?: { value: FlatJson; partialMatch: boolean };
    authorID?: string;
    groupID?: string;
    organizationID?: string;
  };
}

/** GET /v1/messages: oldest first, keyset pagination; a token whenever the page is full (§6.2). */
export async function listMessages(
  ctx: ConversationContext,
  applicationId: string,
  query: MessageListQuery,
  view: ViewOptions,
  requestId: string,
) {
  const { filter } = query;
  const groupId = filter.groupID ?? filter.organizationID;
  if (filter.authorID !== undefined || groupId !== undefined) {
    const lookup = await ctx.identity.lookup(
      applicationId,
      { userIds: filter.authorID !== undefined ? [filter.authorID] : [], groupId },
      requestId,
    );
    if (filter.authorID !== undefined && !lookup.users.has(filter.authorID))
      throw new ApiError('user_not_found', `User ${filter.authorID} not found.`);
    if (groupId !== undefined && !lookup.group) throw new ApiError('group_not_found', `Group ${groupId} not found.`, { status: 401 });
  }
  const after = query.token ? { createdAtMicros: query.token.createdAtWithMicros, externalId: query.token.externalID } : null;
  const listFilter = { metadata: filter.metadata, location: filter.location, authorId: filter.authorID, groupId };
  const [{ rows, token }, total] = await Promise.all([
    pageCursors.messages.pageWithTokenWhenFull(
      query.limit,
      (limit) => messagesRepository.listPage(ctx.db, applicationId, listFilter, { after, limit }),
      (last) => ({ externalID: last.externalId, createdAtWithMicros: last.cursor }),
    ),
    messagesRepository.count(ctx.db, applicationId, listFilter),
  ]);
  const threads = await threadsRepository.findByInternalIds(ctx.db, applicationId, rows.map((row) => row.threadRef));
  const messages = await messageViews(ctx.db, rows, new Map(threads.map((thread) => [thread.internalId, thread])), view);
  return { messages, pagination: { token, total } };
}

