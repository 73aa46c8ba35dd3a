/**
 * Where events enter this context: the services that own the data record each event in their own
 * outbox, in the transaction of the change, and their relay hands it here. An event is stored with
 * one pending delivery per distinct target URL, then each delivery is queued; recording the same
 * event again (a relay retrying) adds nothing.
 */
import { DEFAULT_SUBSCRIPTIONS, ENQUEUE_TIMEOUT_MS, type Queryable, type RecordedEventType, type WebhookEventType } from '@collab/shared';
import { registrationsRepository } from '../../repositories/registrations.repository.js';
import { deliveriesRepository } from '../../repositories/deliveries.repository.js';
import { webhooksPurge } from '../cascade/cascade.js';
import type { WebhooksContext } from '../context.js';
import { enqueueAttempt } from '../deliveries/attempts.js';

export interface IncomingEvent {
  id: string;
  type: RecordedEventType;
  payload: Record<string, unknown>;
}

/** The distinct URLs an event of this type goes to: the application's own URL and its registrations. */
export async function targetUrls(ctx: WebhooksContext, applicationId: string, type: string, requestId: string): Promise<string[]> {
  const [application, registered] = await Promise.all([
    ctx.applications.application(applicationId, requestId),
    registrationsRepository.urlsFor(ctx.db, applicationId, type),
  ]);
  // An application identity no longer knows was deleted: its events go nowhere.
  if (!application) return [];
  const urls = new Set(registered);
  const own = application.eventWebhookURL;
  if (own && (application.eventWebhookSubscriptions ?? DEFAULT_SUBSCRIPTIONS).includes(type as WebhookEventType)) urls.add(own);
  return [...urls];
}

/**
 * Whether the application may still have events recorded, asked in the recording transaction: a
 * relay may hand over an event while, or after, the application's deletion reaches this service.
 * Its deletion recorded here refuses it until the purge finished; after that, identity no longer
 * knows the application (the cascade dropped its cached credentials first).
 */
async function admitsEvents(ctx: WebhooksContext, tx: Queryable, applicationId: string, requestId: string): Promise<boolean> {
  return (await webhooksPurge.admitsWrites(tx, applicationId)) && (await ctx.applications.application(applicationId, requestId)) !== null;
}

/** Records the events and queues their deliveries; returns how many deliveries were created. */
export async function recordEvents(ctx: WebhooksContext, applicationId: string, events: IncomingEvent[], requestId: string) {
  const queued: { id: string; attempts: number }[] = [];
  // The targets of each event type, computed once for the whole batch.
  const targetsOf = new Map<string, Promise<string[]>>();
  for (const event of events) {
    if (!targetsOf.has(event.type)) targetsOf.set(event.type, targetUrls(ctx, applicationId, event.type, requestId));
    const urls = await targetsOf.get(event.type)!;
    // No target: nothing to deliver, nothing to keep.
    if (urls.length === 0) continue;
    queued.push(
      ...(await ctx.db.transaction(async (tx) =>
        (await admitsEvents(ctx, tx, applicationId, requestId)) ? deliveriesRepository.recordEvent(tx, applicationId, event, urls) : [],
      )),
    );
  }
  for (const delivery of queued) {
    try {
      await enqueueAttempt(ctx.deliveryQueue, { applicationId, requestId, deliveryId: delivery.id }, delivery.attempts + 1, { timeoutMs: ENQUEUE_TIMEOUT_MS });
    } catch (error) {
      // Recorded as due in Postgres: the worker's recovery scan queues it once Redis is back.
      ctx.logger.warn({ err: (error as Error).message, deliveryId: delivery.id, requestId }, 'delivery recorded but not queued');
    }
  }
  return queued.length;
}
