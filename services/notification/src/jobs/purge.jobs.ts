/** Purge jobs of the notification-purge queue, and the purges Postgres records as pending (see definePurge). */
import type { JobHandlers, PendingJob, PurgeSettings } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { notificationPurge } from '../domain/cascade/cascade.js';

export const purgeJobs = (db: DataSource, settings: PurgeSettings): JobHandlers<'notification-purge'> => notificationPurge.jobs(db, settings);

export const pendingPurges = (db: DataSource): Promise<PendingJob<'notification-purge'>[]> => notificationPurge.pendingJobs(db);
