/**
 * Jobs of the mail-send queue: one job per mail, whose id is the mail's. The job reads the mail's
 * state, so a job run twice, or again after a crash, sends nothing more (domain/mails/send-mail.ts).
 */
import { DEFAULT_JOB_OPTIONS, QUEUE_JOB_OPTIONS, type JobHandlers, type PendingJob } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { MailServiceContext } from '../domain/context.js';
import { mailMetrics } from '../domain/mails/metrics.js';
import { sendMail } from '../domain/mails/send-mail.js';
import { mailsRepository } from '../repositories/mails.repository.js';

const ATTEMPTS = QUEUE_JOB_OPTIONS['mail-send']?.attempts ?? DEFAULT_JOB_OPTIONS.attempts ?? 1;

export function mailJobs(ctx: MailServiceContext): JobHandlers<'mail-send'> {
  // Registered at start, so the counters are scraped (at 0) before the first mail.
  mailMetrics();
  return {
    'mail.send': ({ applicationId, mailId, requestId }, job, log) => sendMail(ctx, applicationId, mailId, requestId, job.attemptsMade + 1 >= ATTEMPTS, log),
  };
}

const RECOVERY_BATCH = 1000;
/** A pending mail this long past its time has lost its job (Redis lost it, or it was never queued). */
const LOST_AFTER_MS = 10 * 60 * 1000;

/** Pending mails whose job may have been lost with Redis, as jobs (the same id: a job still there is not added twice). */
export async function pendingMails(db: DataSource): Promise<PendingJob<'mail-send'>[]> {
  const due = await mailsRepository.due(db, new Date(Date.now() - LOST_AFTER_MS), RECOVERY_BATCH);
  return due.map(({ id, applicationId }) => ({ name: 'mail.send', data: { applicationId, requestId: `recovery-${id}`, mailId: id }, key: id, jobId: id }));
}
