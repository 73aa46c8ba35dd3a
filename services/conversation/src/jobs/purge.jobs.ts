/** Purge jobs of the conversation-purge queue, and the purges Postgres records as pending (see definePurge). */
import type { JobHandlers, PendingJob, PurgeSettings } from '@collab/shared';
import type { DataSource } from 'typeorm';
import { conversationPurge } from '../domain/cascade/cascade.js';

export const purgeJobs = (db: DataSource, settings: PurgeSettings): JobHandlers<'conversation-purge'> => conversationPurge.jobs(db, settings);

export const pendingPurges = (db: DataSource): Promise<PendingJob<'conversation-purge'>[]> => conversationPurge.pendingJobs(db);
