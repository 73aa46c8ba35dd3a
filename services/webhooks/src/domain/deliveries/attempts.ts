/**
 * One attempt of one delivery: sign the event anew, POST it through the outbound guard, record
 * the outcome, and schedule the next attempt while the retry window lasts.
 *
 * An attempt fails on a network error, a refused address, no complete answer within 10 s, 408,
 * 429 or 5xx; it is retried after about 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, then every 2 h
 * (±20 % jitter, so that a receiver coming back is not hit by every retry at once), until
 * WEBHOOK_RETRY_HOURS after the event. A Retry-After of up to an hour replaces the schedule's
 * delay. Any other 4xx is final; any 2xx is success.
 */
import { signWebhook, type Logger, type Producer, type WebhookEventType } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { DeliveryStatus } from '../../entities/index.js';
import { deliveriesRepository, type AttemptResult } from '../../repositories/deliveries.repository.js';

const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000];
const LATER_RETRY_DELAY_MS = 7_200_000;
const MAX_RETRY_AFTER_MS = 3_600_000;
/**
 * Longer than an attempt can take: an attempt whose job was lost altogether (Redis lost it) is
 * taken over after this. A job whose worker died is retried by the queue and resumes at once.
 */
export const ATTEMPT_LEASE_MS = 60_000;
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** A BullMQ job id per attempt, so that the same attempt is never queued twice. */
export function deliveryJobId(deliveryId: string, attempt: number): string {
  return `${deliveryId}-${attempt}`;
}

/**
 * Queues one attempt of a delivery under its attempt's job id; `manual` gives a retry asked for by
 * a client a job id of its own, beside a scheduled attempt of the same number.
 */
export function enqueueAttempt(
  queue: Producer<'webhooks-delivery'>,
  delivery: { applicationId: string; deliveryId: string; requestId: string },
  attempt: number,
  options: { at?: Date; manual?: boolean; timeoutMs?: number } = {},
) {
  const jobId = deliveryJobId(delivery.deliveryId, attempt);
  return queue.add(
    'delivery.send',
    delivery,
    {
      jobId: options.manual ? `${jobId}-manual-${Date.now()}` : jobId,
      ...(options.at ? { delay: Math.max(0, options.at.getTime() - Date.now()) } : {}),
    },
    { timeoutMs: options.timeoutMs },
  );
}

/** What the receiver did with one attempt, as far as the sender can tell. */
export type AttemptAnswer =
  | { kind: 'answered'; statusCode: number; retryAfterMs: number | null; responseBody: string }
  | { kind: 'failed'; error: string };

/** Sends one signed body; never throws for what a receiver or the network does. */
export type WebhookPoster = (url: string, body: string, headers: Record<string, string>) => Promise<AttemptAnswer>;

/** The delays before each retry, then the one that repeats. */
export interface RetrySchedule {
  delaysMs: readonly number[];
  laterDelayMs: number;
}

export const RETRY_SCHEDULE: RetrySchedule = { delaysMs: RETRY_DELAYS_MS, laterDelayMs: LATER_RETRY_DELAY_MS };

/** The delay before retry number `retry` (1 = the first retry), with jitter. */
export function retryDelayMs(retry: number, schedule: RetrySchedule = RETRY_SCHEDULE, random: () => number = Math.random): number {
  const base = schedule.delaysMs[retry - 1] ?? schedule.laterDelayMs;
  return Math.round(base * (0.8 + 0.4 * random()));
}

function isRetryable(answer: AttemptAnswer): boolean {
  if (answer.kind === 'failed') return true;
  return answer.statusCode === 408 || answer.statusCode === 429 || answer.statusCode >= 500;
}

/** The status and next attempt after an attempt, given when the event happened. */
export function outcomeOf(
  answer: AttemptAnswer,
  attempt: number,
  eventCreatedAt: Date,
  retryWindowMs: number,
  schedule: RetrySchedule = RETRY_SCHEDULE,
  now: number = Date.now(),
): { status: DeliveryStatus; nextAttemptAt: Date | null } {
  if (answer.kind === 'answered' && answer.statusCode >= 200 && answer.statusCode < 300) return { status: 'succeeded', nextAttemptAt: null };
  if (!isRetryable(answer)) return { status: 'failed', nextAttemptAt: null };
  const retryAfter = answer.kind === 'answered' ? answer.retryAfterMs : null;
  const delay = retryAfter !== null && retryAfter <= MAX_RETRY_AFTER_MS ? retryAfter : retryDelayMs(attempt, schedule);
  const next = now + delay;
  if (next > eventCreatedAt.getTime() + retryWindowMs) return { status: 'failed', nextAttemptAt: null };
  return { status: 'pending', nextAttemptAt: new Date(next) };
}

export interface AttemptContext {
  db: DataSource;
  /** The application's current secret (a rotated secret signs at once), or null when it is gone. */
  secretOf: (applicationId: string) => Promise<string | null>;
  post: WebhookPoster;
  retryWindowMs: number;
  /** The decided schedule unless given (tests shorten it). */
  retrySchedule?: RetrySchedule;
  /** Queues the next attempt of a delivery still pending. */
  schedule: (deliveryId: string, attempt: number, at: Date) => Promise<void>;
  observe?: (type: string, outcome: DeliveryStatus | 'retrying', seconds: number) => void;
}

/** Runs the due attempt of a delivery, if it is still due; a delivery not due (sent meanwhile, rescheduled) is left alone. */
export async function attemptDelivery(ctx: AttemptContext, applicationId: string, deliveryId: string, jobId: string, log: Logger) {
  const delivery = await deliveriesRepository.claimAttempt(ctx.db, applicationId, deliveryId, jobId, ATTEMPT_LEASE_MS);
  if (!delivery) return { attempted: false };
  const secret = await ctx.secretOf(applicationId);
  let result: AttemptResult;
  const started = performance.now();
  if (secret === null) {
    // The application was deleted after the event: its deliveries are being removed with it.
    result = { status: 'failed', statusCode: null, error: 'The application no longer exists.', body: '', nextAttemptAt: null };
  } else {
    const signed = signWebhook(delivery.type as WebhookEventType, applicationId, delivery.payload, secret);
    const answer = await ctx.post(delivery.url, signed.body, {
      ...signed.headers,
      'X-Cord-Event-ID': delivery.eventId,
      'X-Cord-Delivery-Attempt': String(delivery.attempts),
    });
    const outcome = outcomeOf(answer, delivery.attempts, delivery.eventCreatedAt, ctx.retryWindowMs, ctx.retrySchedule);
    result = {
      ...outcome,
      statusCode: answer.kind === 'answered' ? answer.statusCode : null,
      error: answer.kind === 'failed' ? answer.error : outcome.status === 'succeeded' ? null : `HTTP ${answer.statusCode}: ${answer.responseBody}`,
      body: signed.body,
    };
  }
  // Another job took the delivery over (this one outlived the lease): its outcome is the one kept.
  const durationMs = performance.now() - started;
  if (!(await deliveriesRepository.recordAttempt(ctx.db, delivery.id, jobId, result, durationMs))) return { attempted: true, status: 'superseded' };
  ctx.observe?.(delivery.type, result.status === 'pending' ? 'retrying' : result.status, durationMs / 1000);
  log.info({ deliveryId, attempt: delivery.attempts, status: result.status, statusCode: result.statusCode, error: result.error }, 'webhook attempt');
  if (result.status === 'pending' && result.nextAttemptAt) {
    // Unqueued (Redis away), the delivery is still recorded as due then: the recovery scan queues it.
    await ctx.schedule(delivery.id, delivery.attempts + 1, result.nextAttemptAt).catch((error: Error) =>
      log.warn({ deliveryId, err: error.message }, 'next attempt not queued; the recovery scan will'),
    );
  }
  return { attempted: true, status: result.status };
}
