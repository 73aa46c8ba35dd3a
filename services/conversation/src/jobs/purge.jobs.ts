/**
 * Purge jobs of the conversation-purge queue. Each reads what is left to delete and deletes it in
 * batches until nothing is left, so running one twice, or again after a crash, ends the same way.
 */
import { drainBatches, type JobHandlers, type Logger } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { purgeRepository } from '../repositories/purge.repository.js';

export function purgeJobs(db: DataSource, batchSize: number): JobHandlers<'conversation-purge'> {
  const report = (log: Logger, counts: Record<string, number>) => {
    log.info(counts, 'purged');
    return counts;
  };
  return {
    'marked.purge': async ({ applicationId }, _job, log) =>
      report(log, {
        messages: await drainBatches(() => purgeRepository.deleteMarkedMessages(db, applicationId, batchSize)),
        threads: await drainBatches(() => purgeRepository.deleteMarkedThreads(db, applicationId, batchSize)),
        // Files carry their bytes: fewer per batch.
        files: await drainBatches(() => purgeRepository.deleteMarkedFiles(db, applicationId, Math.max(1, batchSize / 100))),
      }),
    'application.purge': async ({ applicationId }, _job, log) =>
      report(log, {
        messages: await drainBatches(() => purgeRepository.deleteApplicationRows(db, 'messages', applicationId, batchSize)),
        threads: await drainBatches(() => purgeRepository.deleteApplicationRows(db, 'threads', applicationId, batchSize)),
        files: await drainBatches(() => purgeRepository.deleteApplicationRows(db, 'files', applicationId, Math.max(1, batchSize / 100))),
      }),
  };
}
