/** The thread object of the API, built for many threads with a few queries. */
import type { Queryable, threadView, ViewAnswer } from '@collab/shared';
import type { ThreadRow } from '../../entities/index.js';
import { participantsRepository } from '../../repositories/participants.repository.js';
import { threadsRepository } from '../../repositories/threads.repository.js';
import { displayName, type IdentityDirectory } from '../identity-directory.js';

export async function threadViews(
  db: Queryable,
  identity: IdentityDirectory,
  applicationId: string,
  threads: readonly ThreadRow[],
  requestId: string,
): Promise<ViewAnswer<typeof threadView>[]> {
  const ids = threads.map((thread) => thread.internalId);
  const [stats, participants, mentioned] = await Promise.all([
    threadsRepository.stats(db, ids),
    participantsRepository.ofThreads(db, ids),
    threadsRepository.mentioned(db, ids),
  ]);
  const participantIds = [...new Set(participants.map((participant) => participant.userId))];
  const users = participantIds.length > 0 ? (await identity.lookup(applicationId, { userIds: participantIds }, requestId)).users : new Map();

  return threads.map((thread) => {
    const counts = stats.get(thread.internalId) ?? {
      userMessages: 0,
      actionMessages: 0,
      deletedMessages: 0,
      repliers: [],
      actionMessageRepliers: [],
    };
    const own = participants.filter((participant) => participant.threadRef === thread.internalId);
    return {
      id: thread.externalId,
      organizationID: thread.groupId,
      groupID: thread.groupId,
      total: counts.userMessages + counts.actionMessages + counts.deletedMessages,
      userMessages: counts.userMessages,
      actionMessages: counts.actionMessages,
      deletedMessages: counts.deletedMessages,
      resolved: thread.resolvedAt !== null,
      resolvedTimestamp: thread.resolvedAt ? thread.resolvedAt.toISOString() : null,
      participants: own.map((participant) => ({
        lastSeenTimestamp: participant.lastSeenAt ? participant.lastSeenAt.toISOString() : null,
        userID: participant.userId,
        displayName: displayName(users.get(participant.userId)),
      })),
      subscribers: own.filter((participant) => participant.subscribed).map((participant) => participant.userId),
      repliers: counts.repliers,
      actionMessageRepliers: counts.actionMessageRepliers,
      mentioned: mentioned.get(thread.internalId) ?? [],
      // Typing indicators are a browser feature; the REST API never has anyone typing.
      typing: [] as string[],
      name: thread.name,
      url: thread.url,
      location: thread.location,
      metadata: thread.metadata,
      extraClassnames: thread.extraClassnames,
    };
  });
}
