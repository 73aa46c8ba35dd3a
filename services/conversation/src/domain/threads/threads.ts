/** Thread use cases: creating, reading, updating, listing and deleting threads. */
import { randomUUID } from 'node:crypto';
import {
  ApiError,
  isIdentifier,
  pageCursors,
  type conversationRoutes,
  type CursorOf,
  type FlatJson,
  type Queryable,
  type RouteBody,
  isUniqueViolation,
} from '@collab/shared';
import type { ThreadRow } from '../../entities/index.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { threadsRepository, type ThreadListFilter } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import type { Lookup } from '../identity-directory.js';
import { eventsOutbox } from '../events/outbox.js';
import { threadActionRecipients } from '../events/recipients.js';
import { insertActionMessage } from '../messages/action-messages.js';
import { threadViews } from './thread-views.js';

/** POST /v1/threads body after validation. */
export type ThreadCreationInput = RouteBody<typeof conversationRoutes.createThread>;
/** A thread's creation parameters, as POST /v1/threads and a message's createThread give them. */
type ThreadParams = Omit<ThreadCreationInput, 'id'>;
/** PUT /v1/threads/<ID> body after validation. */
export type ThreadUpdateInput = RouteBody<typeof conversationRoutes.updateThread>;

export function threadNotFound(threadId: string): ApiError {
  return new ApiError('thread_not_found', `Could not find thread with ID ${threadId}`);
}

export async function requireThread(db: Queryable, applicationId: string, threadId: string, forUpdate = false): Promise<ThreadRow> {
  const thread = await threadsRepository.find(db, applicationId, threadId, forUpdate);
  if (!thread) throw threadNotFound(threadId);
  return thread;
}

/**
 * `groupID`, or the deprecated `organizationID` when `groupID` is absent. POST /v1/threads requires
 * one in its schema; a message's createThread is checked here, once the thread must be created.
 */
export function creationGroupId(params: ThreadParams, path = ''): string {
  const groupId = params.groupID ?? params.organizationID;
  if (groupId === undefined) throw new ApiError('missing_field', `Missing required field: ${path}groupID.`);
  return groupId;
}

/**
 * Inserts a thread (or finds the one a concurrent request just created: concurrent creations all
 * succeed, as if run one after another) and
 * subscribes the given group members. Returns the thread and whether this call created it.
 */
export async function insertThread(
  db: Queryable,
  applicationId: string,
  threadId: string,
  params: ThreadParams,
  groupId: string,
  subscribers: readonly string[],
): Promise<{ thread: ThreadRow; created: boolean }> {
  const inserted = await threadsRepository.insertIfAbsent(db, applicationId, threadId, {
    groupId,
    name: params.name,
    url: params.url,
    location: params.location,
    metadata: params.metadata ?? {},
    extraClassnames: params.extraClassnames ?? null,
  });
  const thread = inserted ?? (await requireThread(db, applicationId, threadId, true));
  if (inserted) await participantsRepository.subscribe(db, thread.internalId, subscribers, true);
  return { thread, created: inserted !== null };
}

/** POST /v1/threads: a thread without a message. */
export async function createThread(
  ctx: ConversationContext,
  applicationId: string,
  input: ThreadCreationInput,
  requestId: string,
): Promise<string> {
  const groupId = creationGroupId(input);
  const threadId = input.id ?? `cord:${randomUUID()}`;
  const addSubscribers = input.addSubscribers ?? [];
  const lookup = await ctx.identity.lookup(applicationId, { userIds: addSubscribers, groupId }, requestId);
  if (!lookup.group) throw new ApiError('group_not_found', `Group ${groupId} not found.`, { status: 401 });
  await ctx.db.transaction(async (tx) => {
    const { created } = await insertThread(tx, applicationId, threadId, input, groupId, addSubscribers.filter(lookup.isMember));
    if (!created) throw new ApiError('thread_already_exists', `Thread ${threadId} already exists.`);
  });
  return threadId;
}

export async function getThread(ctx: ConversationContext, applicationId: string, threadId: string, requestId: string) {
  const thread = await requireThread(ctx.db, applicationId, threadId);
  return (await threadViews(ctx.db, ctx.identity, applicationId, [thread], requestId))[0];
}

export async function deleteThread(ctx: ConversationContext, applicationId: string, threadId: string): Promise<void> {
  const thread = await requireThread(ctx.db, applicationId, threadId);
  await threadsRepository.delete(ctx.db, applicationId, thread.internalId);
}

/** A list of users must name at least one user of the application; unknown ones among known ones are ignored. */
function requireSomeKnown(lookup: Lookup, ids: readonly string[] | undefined): void {
  if (ids && ids.length > 0 && !ids.some((id) => lookup.users.has(id)))
    throw new ApiError('user_not_found', `Unknown users: ${ids.join(', ')}`);
}

/** The resolution time an update sets: resolvedTimestamp wins over resolved (true: now, false: null); undefined leaves it. */
function requestedResolution(input: ThreadUpdateInput): Date | null | undefined {
  if (input.resolvedTimestamp !== undefined) return input.resolvedTimestamp;
  if (input.resolved !== undefined) return input.resolved ? new Date() : null;
  return undefined;
}

/**
 * PUT /v1/threads/<ID>. Checks in this order, the first failing one answering: the thread (404), a
 * new id (not an identifier 400, taken 409), a subscriber both added and removed (400), the group
 * (401), the user resolving or reopening (401), then each list of users, which must name at least
 * one user of the application (401).
 */
export async function updateThread(
  ctx: ConversationContext,
  applicationId: string,
  threadId: string,
  input: ThreadUpdateInput,
  requestId: string,
  linkBase: string,
): Promise<void> {
  const current = await requireThread(ctx.db, applicationId, threadId);
  if (input.id !== undefined && input.id !== current.externalId) {
    if (!isIdentifier(input.id)) throw new ApiError('invalid_field', `${input.id} is not a valid identifier.`);
    if (await threadsRepository.find(ctx.db, applicationId, input.id))
      throw new ApiError('thread_already_exists', `Cannot change ID to ${input.id} since a thread with that ID already exists`);
  }
  const removing = new Set(input.removeSubscribers ?? []);
  if ((input.addSubscribers ?? []).some((id) => removing.has(id)))
    throw new ApiError('invalid_field', 'Adding and removing the same subscriber is invalid');

  const requestedGroup = input.organizationID ?? input.groupID;
  const targetGroup = requestedGroup ?? current.groupId;
  const resolvedAt = requestedResolution(input);
  const flipsFrom = (resolvedBefore: Date | null) => resolvedAt !== undefined && (resolvedAt === null) !== (resolvedBefore === null);
  // The user is looked up whenever a flip is possible; whether it happens is decided on the locked
  // row, so that concurrent resolves act as if run one after another (one action message).
  const actor = resolvedAt !== undefined ? input.userID : undefined;
  const named = [
    ...(input.addSubscribers ?? []),
    ...(input.removeSubscribers ?? []),
    ...(input.typing ?? []),
    ...(input.seenByUsers ?? []).map((entry) => entry.userID),
    ...(actor !== undefined ? [actor] : []),
  ];
  const lookup = await ctx.identity.lookup(applicationId, { userIds: named, groupId: targetGroup }, requestId);
  if (!lookup.group) throw new ApiError('organization_not_found', `Group ${targetGroup} not found.`);
  const unknownActor = () => new ApiError('user_not_found', `Unknown user ${actor}`);
  if (actor !== undefined && flipsFrom(current.resolvedAt) && !lookup.users.has(actor)) throw unknownActor();
  requireSomeKnown(lookup, input.addSubscribers);
  requireSomeKnown(lookup, input.removeSubscribers);
  requireSomeKnown(lookup, input.typing);
  requireSomeKnown(lookup, input.seenByUsers?.map((entry) => entry.userID));

  try {
    await ctx.db.transaction(async (tx) => {
      const thread = await requireThread(tx, applicationId, threadId, true);
      const flips = flipsFrom(thread.resolvedAt);
      const user = actor !== undefined && flips ? lookup.users.get(actor) : undefined;
      if (actor !== undefined && flips && !user) throw unknownActor();
      await threadsRepository.update(tx, applicationId, thread.internalId, {
        ...(input.id !== undefined && input.id !== thread.externalId && { externalId: input.id }),
        ...(requestedGroup !== undefined && requestedGroup !== thread.groupId && { groupId: requestedGroup }),
        ...(input.name !== undefined && { name: input.name }),
        ...(input.url !== undefined && { url: input.url }),
        ...(input.location !== undefined && { location: input.location }),
        ...(input.metadata !== undefined && { metadata: input.metadata }),
        ...(input.extraClassnames != null && { extraClassnames: input.extraClassnames }),
        ...(resolvedAt !== undefined && { resolvedAt }),
      });
      if (user) {
        const action = await insertActionMessage(tx, applicationId, thread.internalId, user, resolvedAt ? 'resolved' : 'reopened');
        await threadsRepository.refreshActivity(tx, applicationId, thread.internalId);
        const recipients = threadActionRecipients(user.id, await participantsRepository.subscribers(tx, thread.internalId));
        await eventsOutbox.record(tx, [
          { topic: 'message.added', applicationId, requestId, payload: { messageId: action.internalId, linkBase, recipients } },
        ]);
      }
      const members = (ids: readonly string[] | undefined) => (ids ?? []).filter(lookup.isMember);
      await participantsRepository.subscribe(tx, thread.internalId, members(input.addSubscribers), true);
      await participantsRepository.unsubscribe(tx, thread.internalId, members(input.removeSubscribers));
      const seen = (input.seenByUsers ?? []).filter((entry) => lookup.isMember(entry.userID));
      await participantsRepository.markSeen(tx, thread.internalId, seen.filter((entry) => entry.seen).map((entry) => entry.userID), false);
      await participantsRepository.markUnseen(tx, thread.internalId, seen.filter((entry) => !entry.seen).map((entry) => entry.userID));
    });
  } catch (error) {
    // Another request took the new id between the check above and this write.
    if (input.id !== undefined && isUniqueViolation(error))
      throw new ApiError('thread_already_exists', `Cannot change ID to ${input.id} since a thread with that ID already exists`);
    throw error;
  }
}

export interface ThreadListQuery {
  limit: number;
  token: CursorOf<typeof pageCursors.threads> | null;
  filter: {
    location?: { value: FlatJson; partialMatch: boolean };
    metadata?: FlatJson;
    groupID?: string;
    organizationID?: string;
    firstMessageTimestamp?: { from?: Date; to?: Date };
    mostRecentMessageTimestamp?: { from?: Date; to?: Date };
    resolvedStatus?: 'any' | 'resolved' | 'unresolved';
  };
}

/** GET /v1/threads: one page, newest activity first, ties by id; the caller turns `nextToken` into a Link header. */
export async function listThreads(ctx: ConversationContext, applicationId: string, query: ThreadListQuery, requestId: string) {
  const { filter } = query;
  const groupId = filter.groupID ?? filter.organizationID;
  if (groupId !== undefined) {
    const lookup = await ctx.identity.lookup(applicationId, { userIds: [], groupId }, requestId);
    if (!lookup.group) throw new ApiError('group_not_found', `Group ${groupId} not found.`, { status: 401 });
  }
  const listFilter: ThreadListFilter = {
    location: filter.location,
    metadata: filter.metadata,
    groupId,
    firstMessage: filter.firstMessageTimestamp,
    mostRecentMessage: filter.mostRecentMessageTimestamp,
    resolved: filter.resolvedStatus === 'resolved' ? true : filter.resolvedStatus === 'unresolved' ? false : undefined,
  };
  const after = query.token ? { activity: query.token.nextCursorTimestamp, externalId: query.token.externalID } : null;
  // A token, and so a Link header, only when another page exists.
  const [{ rows, token: nextToken }, total] = await Promise.all([
    pageCursors.threads.page(
      query.limit,
      (limit) => threadsRepository.listPage(ctx.db, applicationId, listFilter, { after, limit }),
      (last) => ({ externalID: last.externalId, nextCursorTimestamp: last.cursor }),
    ),
    threadsRepository.count(ctx.db, applicationId, listFilter),
  ]);
  return { threads: await threadViews(ctx.db, ctx.identity, applicationId, rows, requestId), total, nextToken };
}
