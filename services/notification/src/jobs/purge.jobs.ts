/** Purge jobs of the notification-purge queue: bounded batches until nothing is left (idempotent). */
import { drainBatches, type JobHandlers } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { notificationPurgeRepository } from '../repositories/notifications.repository.js';

export function purgeJobs(db: DataSource, batchSize: number): JobHandlers<'notification-purge'> {
  return {
    'marked.purge': async ({ applicationId }) => ({
      notifications: await drainBatches(() => notificationPurgeRepository.deleteMarked(db, applicationId, batchSize)),
    }),
    'application.purge': async ({ applicationId }) => ({
      notifications: await drainBatches(() => notificationPurgeRepository.deleteOfApplication(db, applicationId, batchSize)),
    }),
  };
}
