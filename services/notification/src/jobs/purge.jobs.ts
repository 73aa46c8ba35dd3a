/**
 * Purge jobs of the notification-purge queue: bounded batches until nothing is left (idempotent).
 * Identity tells this service of a deletion only once it has committed, so what a job purges is
 * gone for good.
 */
import { drainBatches, purgePace, type JobHandlers, type PendingJob, type PurgeSettings } from '@collab/shared';
import { purgeOrder } from '@collab/shared/storage';
import type { DataSource } from 'typeorm';
import { notificationPurgeRepository as purges } from '../repositories/notifications.repository.js';

export function purgeJobs(db: DataSource, { batchSize, rowsPerSecond }: PurgeSettings): JobHandlers<'notification-purge'> {
  return {
    'marked.purge': async ({ applicationId }) => {
      await purgeOrder.afterMarkings(db, 'notification', applicationId);
      return { notifications: await drainBatches(() => purges.deleteMarked(db, applicationId, batchSize), purgePace(rowsPerSecond)) };
    },
    'application.purge': async ({ applicationId }) => {
      await purgeOrder.afterMarkings(db, 'notification', applicationId);
      const request = await purges.applicationPurgeRequest(db, applicationId);
      const notifications = await drainBatches(() => purges.deleteOfApplication(db, applicationId, batchSize), purgePace(rowsPerSecond));
      if (request) await purges.forgetApplicationPurge(db, applicationId, request);
      return { notifications };
    },
  };
}

/**
 * The purges Postgres records as pending, whose job may have been lost with Redis: a `marked.purge`
 * for every application with notifications still marked, an `application.purge` for every
 * recorded deletion.
 */
export async function pendingPurges(db: DataSource): Promise<PendingJob<'notification-purge'>[]> {
  const data = (applicationId: string) => ({ applicationId, requestId: 'pending-work' });
  return [
    ...(await purges.applicationsWithMarkedRows(db)).map((applicationId) => ({
      name: 'marked.purge' as const,
      data: data(applicationId),
      key: `pending-marked-${applicationId}`,
    })),
    ...(await purges.requestedApplicationPurges(db)).map((applicationId) => ({
      name: 'application.purge' as const,
      data: data(applicationId),
      key: `pending-application-${applicationId}`,
    })),
  ];
}
