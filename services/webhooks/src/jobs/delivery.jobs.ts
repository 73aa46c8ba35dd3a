/**
 * Jobs of the webhooks-delivery queue: one job per attempt of one delivery. The job reads the
 * delivery's current state, so a job run twice, or one whose delivery was sent meanwhile, sends
 * nothing more.
 */
import type { CredentialStore, JobHandlers, PendingJob, Producer } from '@collab/shared';

/** Where a job finds the application's current secret. */
type SecretSource = Pick<CredentialStore, 'application'>;
import type { DataSource } from 'typeorm';
import { ATTEMPT_LEASE_MS, attemptDelivery, deliveryJobId, enqueueAttempt, type RetrySchedule, type WebhookPoster } from '../domain/deliveries/attempts.js';
import { deliveriesRepository } from '../repositories/deliveries.repository.js';
import { webhookMetrics } from '../domain/deliveries/metrics.js';

export interface DeliveryJobsContext {
  db: DataSource;
  credentials: SecretSource;
  post: WebhookPoster;
  queue: Producer<'webhooks-delivery'>;
  retryWindowMs: number;
  retrySchedule?: RetrySchedule;
}

export function deliveryJobs(ctx: DeliveryJobsContext): JobHandlers<'webhooks-delivery'> {
  const metrics = webhookMetrics();
  return {
    'delivery.send': async ({ applicationId, deliveryId, requestId }, job, log) =>
      attemptDelivery(
        {
          db: ctx.db,
          post: ctx.post,
          retryWindowMs: ctx.retryWindowMs,
          retrySchedule: ctx.retrySchedule,
          secretOf: async (id) => (await ctx.credentials.application(id, requestId))?.secret ?? null,
          schedule: async (id, attempt, at) => {
            await enqueueAttempt(ctx.queue, { applicationId, requestId, deliveryId: id }, attempt, { at });
          },
          observe: metrics.observe,
        },
        applicationId,
        deliveryId,
        job.id ?? deliveryId,
        log,
      ),
  };
}

const RECOVERY_BATCH = 1000;
const PRUNE_BATCH = 1000;

/**
 * Deliveries that are due but whose job may have been lost with Redis (or was never queued),
 * as jobs; also prunes the log past its retention, as often.
 */
export async function pendingDeliveries(db: DataSource, logDays: number): Promise<PendingJob<'webhooks-delivery'>[]> {
  await deliveriesRepository.pruneBefore(db, new Date(Date.now() - logDays * 24 * 3600 * 1000), PRUNE_BATCH);
  return (await deliveriesRepository.due(db, ATTEMPT_LEASE_MS, RECOVERY_BATCH)).map((delivery) => ({
    name: 'delivery.send' as const,
    data: { applicationId: delivery.applicationId, requestId: 'pending-work', deliveryId: delivery.id },
    key: deliveryJobId(delivery.id, delivery.attempts + 1),
    jobId: deliveryJobId(delivery.id, delivery.attempts + 1),
  }));
}
