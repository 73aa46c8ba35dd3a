/** Reading, listing and deleting messages. */
import { ApiError, pageCursors, type CursorOf, type FlatJson } from '@collab/shared';
import { messagesRepository } from '../../repositories/messages.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import { requireThread } from '../threads/threads.js';
import { requireMessageInThread } from './checks.js';
import { messageViews, type ViewOptions } from './message-views.js';

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
    threadID?: string;
  };
}

/** GET /v1/messages: oldest first, keyset pagination; a token whenever the page is full, even if nothing follows. */
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
  const listFilter = { metadata: filter.metadata, location: filter.location, authorId: filter.authorID, groupId, threadId: filter.threadID };
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

