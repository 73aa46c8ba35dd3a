/** Purge jobs of the notification-purge queue: bounded batches until nothing is left (idempotent). */
import type { JobHandlers } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { notificationPurgeRepository } from '../repositories/notifications.repository.js';

async function drain(step: () => Promise<number>): Promise<number> {
  let total = 0;
  for (let deleted = await step(); deleted > 0; deleted = await step()) total += deleted;
  return total;
}

export function purgeJobs(db: DataSource, batchSize: number): JobHandlers<'notification-purge'> {
  return {
    'marked.purge': async ({ applicationId }) => ({
      notifications: await drain(() => notificationPurgeRepository.deleteMarked(db, applicationId, batchSize)),
    }),
    'application.purge': async ({ applicationId }) => ({
      notifications: await drain(() => notificationPurgeRepository.deleteOfApplication(db, applicationId, batchSize)),
    }),
  };
}
