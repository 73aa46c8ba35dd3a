/**
 * The conversation side of a deletion cascade: what the deleted group or user owned becomes
 * unreadable now (marked), a deleted application's data is recorded for purge, and a purge job
 * removes it, table by table, children first.
 */
import { definePurge } from '@collab/shared/storage';
import { CONVERSATION_SCHEMA } from '../../entities/index.js';
import { purgeRepository } from '../../repositories/purge.repository.js';

export const conversationPurge = definePurge({
  schema: CONVERSATION_SCHEMA,
  mark: { group: purgeRepository.markGroup, user: purgeRepository.markUser },
  tables: [
    { name: 'messages', table: 'conversation.messages', key: 'internal_id', deleteMarked: purgeRepository.deleteMarkedMessages },
    { name: 'threads', table: 'conversation.threads', key: 'internal_id' },
    // Files carry their bytes: fewer per batch.
    { name: 'files', table: 'conversation.files', key: 'id', batchDivisor: 100 },
  ],
});
