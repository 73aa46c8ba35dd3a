/** The conversation part of the client-token reads (original-extras §4.5): counts of the viewer's threads. */
import type { Viewer } from '@collab/shared';
import { clientThreadsRepository, type ClientThreadFilter } from '../../repositories/client-threads.repository.js';
import type { ConversationContext } from '../context.js';

/** GET /v1/client/threadCounts: over the viewer's groups, whatever `groupID` the filter names (§4.3). */
export function threadCounts(ctx: ConversationContext, applicationId: string, viewer: Viewer, filter: ClientThreadFilter) {
  return clientThreadsRepository.counts(ctx.db, applicationId, viewer.groupIds, viewer.userId, filter);
}
