/** The conversation part of the client-token reads (original-extras §4.5): the viewer's threads, their counts, a thread, a message. */
import { ApiError, clientUserData, type clientMessageView, type threadSummaryView, type Viewer, type ViewAnswer } from '@collab/shared';
import type { MessageRow, ParticipantRow, ThreadRow } from '../../entities/index.js';
import { clientThreadsRepository, type ClientThreadFilter, type ClientThreadSort } from '../../repositories/client-threads.repository.js';
import { messagesRepository } from '../../repositories/messages.repository.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import { messageViews, type ViewOptions } from '../messages/message-views.js';
import { threadViews } from '../threads/thread-views.js';

/** Threads answered when the request names no `initialFetchCount` (§4.4). */
const DEFAULT_THREAD_COUNT = 10;
/** A thread of at most this many messages is answered whole (§4.5). */
const WHOLE_THREAD_MAX = 3;
/** The most messages of the viewer's unread window (§4.5). */
const UNREAD_WINDOW_MAX = 50;

/** The viewer has seen a message they wrote, or one created at or before their last-seen time (§4.7). */
function seenBy(viewerId: string, participant: ParticipantRow | undefined) {
  return (row: MessageRow) => row.authorId === viewerId || (participant?.lastSeenAt != null && participant.lastSeenAt >= row.createdAt);
}

/**
 * The groups a thread read looks in: the viewer's, narrowed to the filter's `groupID` (or
 * `organizationID`) when it names one (decision 53; the original ignored it). A group the viewer
 * is not in leaves none.
 */
function groupsOf(viewer: Viewer, filter: ClientThreadFilter): string[] {
  const named = filter.groupID ?? filter.organizationID;
  return named === undefined ? [...viewer.groupIds] : viewer.groupIds.filter((groupId) => groupId === named);
}

/** GET /v1/client/threadCounts: over the viewer's groups (§4.3, decision 53). */
export function threadCounts(ctx: ConversationContext, applicationId: string, viewer: Viewer, filter: ClientThreadFilter) {
  return clientThreadsRepository.counts(ctx.db, applicationId, groupsOf(viewer, filter), viewer.userId, filter);
}

/**
 * GET /v1/client/message/<ID>: the message as GET message shows it, plus `seen` (the viewer wrote
 * it, or their last-seen time is at or after its creation). A message of a thread outside the
 * viewer's groups is not found, never told apart from an unknown one (decision 53).
 */
export async function message(
  ctx: ConversationContext,
  applicationId: string,
  viewer: Viewer,
  messageId: string,
  view: ViewOptions,
): Promise<ViewAnswer<typeof clientMessageView>> {
  const notFound = () => new ApiError('message_not_found', `Message ${messageId} not found.`);
  const row = await messagesRepository.find(ctx.db, applicationId, messageId);
  if (!row) throw notFound();
  const [thread] = await threadsRepository.findByInternalIds(ctx.db, applicationId, [row.threadRef]);
  if (!thread || !viewer.groupIds.includes(thread.groupId)) throw notFound();
  const [shown] = await messageViews(ctx.db, [row], new Map([[thread.internalId, thread]]), view);
  const participant = (await participantsRepository.ofThreads(ctx.db, [thread.internalId])).find((p) => p.userId === viewer.userId);
  return { ...shown, seen: seenBy(viewer.userId, participant)(row) };
}

/**
 * ThreadSummary (§4.6) of each thread, in their order: the thread object with the client's counts
 * (`total` without deleted messages), the viewer's read state and the first and last messages.
 */
async function summaries(
  ctx: ConversationContext,
  applicationId: string,
  viewer: Viewer,
  threads: readonly ThreadRow[],
  view: ViewOptions,
  requestId: string,
): Promise<ViewAnswer<typeof threadSummaryView>[]> {
  const refs = threads.map((thread) => thread.internalId);
  const [shown, states, ends, participants] = await Promise.all([
    threadViews(ctx.db, ctx.identity, applicationId, threads, requestId),
    clientThreadsRepository.states(ctx.db, applicationId, refs, viewer.userId),
    clientThreadsRepository.firstAndLast(ctx.db, applicationId, refs),
    participantsRepository.ofThreads(ctx.db, refs),
  ]);
  const unique = [...new Map(ends.map((row) => [row.internalId, row])).values()];
  const threadsByRef = new Map(threads.map((thread) => [thread.internalId, thread]));
  const userIds = [...new Set(participants.map((participant) => participant.userId))];
  const [messages, directory] = await Promise.all([
    clientMessages(ctx, viewer, unique, threadsByRef, participants, view),
    userIds.length > 0 ? ctx.identity.lookup(applicationId, { userIds }, requestId) : undefined,
  ]);
  return threads.map((thread, index) => {
    const { total: _all, participants: people, ...rest } = shown[index];
    const own = messages.filter((message) => message.row.threadRef === thread.internalId).sort((a, b) => order(a.row, b.row));
    const state = states.get(thread.internalId);
    return {
      ...rest,
      total: rest.userMessages + rest.actionMessages,
      // The client's names: the short name, else the name, else "unknown" (§4.6).
      participants: people.map((person) => ({ ...person, displayName: clientUserData(person.userID, directory?.users.get(person.userID)).displayName })),
      unread: state?.unread ?? 0,
      viewerIsThreadParticipant: state?.isParticipant ?? false,
      firstMessage: own[0]?.view ?? null,
      lastMessage: own.at(-1)?.view ?? null,
    };
  });
}

/** Creation order, ties by internal id: the order of a thread's messages. */
function order(a: MessageRow, b: MessageRow) {
  return a.createdAt.getTime() - b.createdAt.getTime() || Number(a.internalId) - Number(b.internalId);
}

/** ClientMessageData (§4.6) of each row, with the row it came from. */
async function clientMessages(
  ctx: ConversationContext,
  viewer: Viewer,
  rows: readonly MessageRow[],
  threads: Map<string, ThreadRow>,
  participants: readonly ParticipantRow[],
  view: ViewOptions,
) {
  const shown = await messageViews(ctx.db, rows, threads, view);
  return rows.map((row, index) => {
    const participant = participants.find((p) => p.threadRef === row.threadRef && p.userId === viewer.userId);
    return { row, view: { ...shown[index], seen: seenBy(viewer.userId, participant)(row) } };
  });
}

/**
 * GET /v1/client/threads: the first `initialFetchCount` threads of the viewer's groups that pass
 * the filter, and the counts of all of them (§4.4, §4.5). There is no next page, as in the original.
 */
export async function threads(
  ctx: ConversationContext,
  applicationId: string,
  viewer: Viewer,
  query: { filter: ClientThreadFilter; sortBy?: ClientThreadSort['by']; sortDirection?: ClientThreadSort['direction']; initialFetchCount?: number },
  view: ViewOptions,
  requestId: string,
) {
  const limit = query.initialFetchCount ?? DEFAULT_THREAD_COUNT;
  const sort = { by: query.sortBy ?? 'first_message_timestamp', direction: query.sortDirection ?? 'descending' } as const;
  const [page, counts] = await Promise.all([
    clientThreadsRepository.page(ctx.db, applicationId, groupsOf(viewer, query.filter), viewer.userId, query.filter, sort, limit),
    clientThreadsRepository.counts(ctx.db, applicationId, groupsOf(viewer, query.filter), viewer.userId, query.filter),
  ]);
  const refs = page.slice(0, limit).map((row) => row.threadRef);
  const rows = new Map((await threadsRepository.findByInternalIds(ctx.db, applicationId, refs)).map((row) => [row.internalId, row]));
  const found = refs.flatMap((ref) => rows.get(ref) ?? []);
  return {
    threads: await summaries(ctx, applicationId, viewer, found, view, requestId),
    counts,
    loading: false as const,
    hasMore: page.length > limit,
  };
}

/**
 * GET /v1/client/thread/<ID>: the thread's summary and a window of its messages, oldest first
 * (§4.5). With `initialFetchCount` N: the last N. Without: all of a thread of at most three;
 * else, for a participant, the messages from the last one they had seen on (at most 50) and the
 * last; for anyone else the last. The first message is answered only when every message is,
 * otherwise `hasMore` says there are earlier ones. A thread outside the viewer's groups is not
 * found, never told apart from an unknown one (decision 53).
 */
export async function thread(
  ctx: ConversationContext,
  applicationId: string,
  viewer: Viewer,
  threadId: string,
  initialFetchCount: number | undefined,
  view: ViewOptions,
  requestId: string,
) {
  const row = await threadsRepository.find(ctx.db, applicationId, threadId);
  if (!row || !viewer.groupIds.includes(row.groupId)) throw new ApiError('thread_not_found', `Thread ${threadId} not found.`);
  const [all, participants] = await Promise.all([
    messagesRepository.inThread(ctx.db, applicationId, row.internalId, 'ascending'),
    participantsRepository.ofThreads(ctx.db, [row.internalId]),
  ]);
  const chosen = messageWindow(all, initialFetchCount, participants.find((p) => p.userId === viewer.userId));
  const complete = chosen.length === all.length;
  const answered = complete ? chosen : chosen.slice(1);
  const threadsByRef = new Map([[row.internalId, row]]);
  const [[summary], messages] = await Promise.all([
    summaries(ctx, applicationId, viewer, [row], view, requestId),
    clientMessages(ctx, viewer, answered, threadsByRef, participants, view),
  ]);
  return { thread: summary, messages: messages.map((message) => message.view), loading: false as const, hasMore: !complete };
}

/** The messages the original loads first (§4.5): always the first, then the window; oldest first, no repeats. */
function messageWindow(all: readonly MessageRow[], count: number | undefined, participant: ParticipantRow | undefined): MessageRow[] {
  if (all.length === 0) return [];
  let window: MessageRow[];
  if (count !== undefined) window = count === 0 ? [] : all.slice(-count);
  else if (all.length <= WHOLE_THREAD_MAX) window = [...all];
  else if (participant) {
    const lastSeen = participant.lastSeenAt;
    const seenCount = lastSeen ? all.filter((message) => message.createdAt <= lastSeen).length : 0;
    window = [...all.slice(Math.max(seenCount - 1, 0), Math.max(seenCount - 1, 0) + UNREAD_WINDOW_MAX), all[all.length - 1]];
  } else window = [all[all.length - 1]];
  return [...new Set([all[0], ...window])].sort(order);
}
