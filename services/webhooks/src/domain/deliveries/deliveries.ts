/** The delivery log an application reads, and the manual retry. */
import { ApiError, ENQUEUE_TIMEOUT_MS, pageCursors, type CursorOf, type deliveryView as deliveryAnswer, type ViewAnswer } from '@collab/shared';
import type { DeliveryStatus } from '../../entities/index.js';
import { deliveriesRepository, type DeliveryFilter, type DeliveryLogRow } from '../../repositories/deliveries.repository.js';
import type { WebhooksContext } from '../context.js';
import { enqueueAttempt } from './attempts.js';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

function deliveryView(row: DeliveryLogRow): ViewAnswer<typeof deliveryAnswer> {
  return {
    id: row.id,
    eventID: row.eventId,
    type: row.type,
    url: row.url,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    createdTimestamp: row.createdAt.toISOString(),
    lastAttemptTimestamp: iso(row.lastAttemptAt),
    nextAttemptTimestamp: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
  };
}

const notFound = () => new ApiError('not_found', 'Delivery not found.');

export async function listDeliveries(
  ctx: WebhooksContext,
  applicationId: string,
  query: {
    limit: number;
    token: CursorOf<typeof pageCursors.deliveries> | null;
    filter: { status?: DeliveryStatus; type?: string; url?: string };
  },
) {
  const filter: DeliveryFilter = query.filter;
  const after = query.token ? { createdAtMicros: query.token.createdAtWithMicros, id: query.token.id } : null;
  const [{ rows, token }, total] = await Promise.all([
    pageCursors.deliveries.page(
      query.limit,
      (limit) => deliveriesRepository.page(ctx.db, applicationId, filter, { after, limit }),
      (row) => ({ id: row.id, createdAtWithMicros: row.cursor }),
    ),
    deliveriesRepository.count(ctx.db, applicationId, filter),
  ]);
  return { deliveries: rows.map(deliveryView), pagination: { token, total } };
}

/** One delivery with `body`: the last attempt's body exactly as sent and signed (null before the first attempt). */
export async function getDelivery(ctx: WebhooksContext, applicationId: string, deliveryId: string) {
  const row = await deliveriesRepository.find(ctx.db, applicationId, deliveryId.toLowerCase());
  if (!row) throw notFound();
  return { ...deliveryView(row), body: row.lastBody };
}

/** The delivery's latest attempts, newest first (kept as long as the delivery). */
export async function listDeliveryAttempts(ctx: WebhooksContext, applicationId: string, deliveryId: string, limit: number) {
  const id = deliveryId.toLowerCase();
  if (!(await deliveriesRepository.find(ctx.db, applicationId, id))) throw notFound();
  const rows = await deliveriesRepository.attempts(ctx.db, applicationId, id, limit);
  return {
    attempts: rows.map((row) => ({
      attempt: row.attempt,
      status: row.status,
      statusCode: row.statusCode,
      error: row.error,
      startedTimestamp: row.startedAt.toISOString(),
      durationMs: row.durationMs,
    })),
  };
}

/** Sends the delivery again now: same event id, the next attempt number, a fresh signature. */
export async function retryDelivery(ctx: WebhooksContext, applicationId: string, deliveryId: string, requestId: string) {
  const id = deliveryId.toLowerCase();
  const attempts = await deliveriesRepository.makeDue(ctx.db, applicationId, id);
  if (attempts === null) throw notFound();
  // Its own job id: a scheduled attempt of the same number may wait in the queue; whichever runs
  // first sends, the other finds the delivery not due.
  try {
    await enqueueAttempt(ctx.deliveryQueue, { applicationId, requestId, deliveryId: id }, attempts + 1, { manual: true, timeoutMs: ENQUEUE_TIMEOUT_MS });
  } catch (error) {
    // Due in Postgres already: the worker's recovery scan queues it once Redis is back.
    ctx.logger.warn({ err: (error as Error).message, deliveryId: id, requestId }, 'retry recorded but not queued');
  }
}
