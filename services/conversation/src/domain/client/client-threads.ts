/** The conversation part of the client-token reads (original-extras §4.5): counts of the viewer's threads, a message. */
import { ApiError, type Viewer } from '@collab/shared';
import { clientThreadsRepository, type ClientThreadFilter } from '../../repositories/client-threads.repository.js';
import { messagesRepository } from '../../repositories/messages.repository.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import type { ConversationContext } from '../context.js';
import { messageViews, type ViewOptions } from '../messages/message-views.js';

/** GET /v1/client/threadCounts: over the viewer's groups, whatever `groupID` the filter names (§4.3). */
export function threadCounts(ctx: ConversationContext, applicationId: string, viewer: Viewer, filter: ClientThreadFilter) {
  return clientThreadsRepository.counts(ctx.db, applicationId, viewer.groupIds, viewer.userId, filter);
}

/**
 * GET /v1/client/message/<ID>: the message as GET message shows it, plus `seen` (the viewer wrote
 * it, or their last-seen time is at or after its creation). A message of a thread outside the
 * viewer's groups is not found, never told apart from an unknown one (decision 53).
 */
export async function message(ctx: ConversationContext, applicationId: string, viewer: Viewer, messageId: string, view: ViewOptions) {
  const notFound = () => new ApiError('message_not_found', `Message ${messageId} not found.`);
  const row = await messagesRepository.find(ctx.db, applicationId, messageId);
  if (!row) throw notFound();
  const [thread] = await threadsRepository.findByInternalIds(ctx.db, applicationId, [row.threadRef]);
  if (!thread || !viewer.groupIds.includes(thread.groupId)) throw notFound();
  const [shown] = await messageViews(ctx.db, [row], new Map([[thread.internalId, thread]]), view);
  const participant = (await participantsRepository.ofThreads(ctx.db, [thread.internalId])).find((p) => p.userId === viewer.userId);
  const seen = row.authorId === viewer.userId || (participant?.lastSeenAt != null && participant.lastSeenAt >= row.createdAt);
  return { ...shown, seen };
}
