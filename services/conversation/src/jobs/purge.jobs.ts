/**
 * Purge jobs of the conversation-purge queue. Each reads what is left to delete and deletes it in
 * batches until nothing is left, so running one twice, or again after a crash, ends the same way.
 * Identity tells this service of a deletion only once it has committed, so what a job purges is
 * gone for good.
 */
import { drainBatches, purgePace, type JobHandlers, type Logger, type PendingJob, type PurgeSettings } from '@collab/shared';
import { purgeOrder } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { purgeRepository } from '../repositories/purge.repository.js';

export function purgeJobs(db: DataSource, { batchSize, rowsPerSecond }: PurgeSettings): JobHandlers<'conversation-purge'> {
  const report = (log: Logger, counts: Record<string, number>) => {
    log.info(counts, 'purged');
    return counts;
  };
  return {
    'marked.purge': async ({ applicationId }, _job, log) => {
      await purgeOrder.afterMarkings(db, 'conversation', applicationId);
      const pace = purgePace(rowsPerSecond);
      return report(log, {
        messages: await drainBatches(() => purgeRepository.deleteMarkedMessages(db, applicationId, batchSize), pace),
        threads: await drainBatches(() => purgeRepository.deleteMarkedThreads(db, applicationId, batchSize), pace),
        // Files carry their bytes: fewer per batch.
        files: await drainBatches(() => purgeRepository.deleteMarkedFiles(db, applicationId, Math.max(1, batchSize / 100)), pace),
      });
    },
    'application.purge': async ({ applicationId }, _job, log) => {
      await purgeOrder.afterMarkings(db, 'conversation', applicationId);
      const request = await purgeRepository.applicationPurgeRequest(db, applicationId);
      const pace = purgePace(rowsPerSecond);
      const counts = report(log, {
        messages: await drainBatches(() => purgeRepository.deleteApplicationRows(db, 'messages', applicationId, batchSize), pace),
        threads: await drainBatches(() => purgeRepository.deleteApplicationRows(db, 'threads', applicationId, batchSize), pace),
        files: await drainBatches(() => purgeRepository.deleteApplicationRows(db, 'files', applicationId, Math.max(1, batchSize / 100)), pace),
      });
      if (request) await purgeRepository.forgetApplicationPurge(db, applicationId, request);
      return counts;
    },
  };
}

/**
 * The purges Postgres records as pending, whose job may have been lost with Redis: a `marked.purge`
 * for every application with rows still marked, an `application.purge` for every recorded deletion.
 */
export async function pendingPurges(db: DataSource): Promise<PendingJob<'conversation-purge'>[]> {
  const data = (applicationId: string) => ({ applicationId, requestId: 'pending-work' });
  return [
    ...(await purgeRepository.applicationsWithMarkedRows(db)).map((applicationId) => ({
      name: 'marked.purge' as const,
      data: data(applicationId),
      key: `pending-marked-${applicationId}`,
    })),
    ...(await purgeRepository.requestedApplicationPurges(db)).map((applicationId) => ({
      name: 'application.purge' as const,
      data: data(applicationId),
      key: `pending-application-${applicationId}`,
    })),
  ];
}
