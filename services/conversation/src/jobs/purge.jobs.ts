/**
 * Purge jobs of the conversation-purge queue. Each reads what is left to delete and deletes it in
 * batches until nothing is left, so running one twice, or again after a crash, ends the same way.
 */
import type { JobHandlers, Logger } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { purgeRepository } from '../repositories/purge.repository.js';

async function drain(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let deleted = await step(); deleted > 0; deleted = await step()) total += deleted;
  return total;
}

export function purgeJobs(db: DataSource, batchSize: number): JobHandlers<'conversation-purge'> {
  const report = (log: Logger, counts: Record<string, number>) => {
    log.info(counts, 'purged');
    return counts;
  };
  return {
    'marked.purge': async ({ applicationId }, _job, log) =>
      report(log, {
        messages: await drain(() => purgeRepository.deleteMarkedMessages(db, applicationId, batchSize)),
        threads: await drain(() => purgeRepository.deleteMarkedThreads(db, applicationId, batchSize)),
        // Files carry their bytes: fewer per batch.
        files: await drain(() => purgeRepository.deleteMarkedFiles(db, applicationId, Math.max(1, batchSize / 100))),
      }),
    'application.purge': async ({ applicationId }, _job, log) =>
      report(log, {
        messages: await drain(() => purgeRepository.deleteApplicationRows(db, 'messages', applicationId, batchSize)),
        threads: await drain(() => purgeRepository.deleteApplicationRows(db, 'threads', applicationId, batchSize)),
        files: await drain(() => purgeRepository.deleteApplicationRows(db, 'files', applicationId, Math.max(1, batchSize / 100))),
      }),
  };
}
