/** Purge jobs of the webhooks-purge queue, and the purges Postgres records as pending (see definePurge). */
import type { JobHandlers, PendingJob, PurgeSettings } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { webhooksPurge } from '../domain/cascade/cascade.js';

export const purgeJobs = (db: DataSource, settings: PurgeSettings): JobHandlers<'webhooks-purge'> => webhooksPurge.jobs(db, settings);

export const pendingPurges = (db: DataSource): Promise<PendingJob<'webhooks-purge'>[]> => webhooksPurge.pendingJobs(db);
