/**
 * The webhooks service's internal HTTP API: the relays of the services that record events hand
 * them over here. Producer and consumer both validate against these schemas.
 */
import type { ApplicationVersions } from '../application-versions.js';
import { ApiError } from '../errors.js';
import type { InternalClient } from '../http/internal-client.js';
import { MAX_INTERNAL_BODY_BYTES } from '../http/json-body.js';
import type { Logger } from '../logger.js';
import { ReusedAnswers } from '../reused-answers.js';
import { s, type Infer } from '../schema/index.js';
import { RECORDED_EVENT_TYPES } from '../webhooks/events.js';

export const webhooksInternal = {
  /**
   * Records events of the application (the application header) for delivery. An event id already
   * recorded adds nothing, so a relay that retries after a lost answer delivers each event once.
   */
  recordEvents: {
    method: 'POST',
    path: '/internal/events',
    request: s.object({
      events: s.array(
        s.object({
          id: s.uuid(),
          type: s.enum(RECORDED_EVENT_TYPES),
          // The event object as receivers get it; its shape is the producer's (the REST objects it owns).
          payload: s.unknown(),
        }),
        { minItems: 1, maxItems: 1000 },
      ),
    }),
    response: s.object({ deliveries: s.integer({ minimum: 0 }) }),
  },
  /**
   * Whether an event of this type of the application (the application header) would go anywhere
   * now: a producer asks before building a payload nobody receives.
   */
  hasTargets: {
    method: 'GET',
    path: (type: string) => `/internal/targets/${encodeURIComponent(type)}`,
    response: s.object({ subscribed: s.boolean() }),
  },
} as const;

export type WebhookEventInput = Infer<typeof webhooksInternal.recordEvents.request>['events'][number];

/** Events one call carries at most (the contract's maxItems). */
const EVENTS_PER_CALL = 1000;
/** `{"events":[]}` around them. */
const ENVELOPE_BYTES = 13;

/**
 * The events in calls that each fit the internal body limit and the contract, in their order. An
 * event that cannot fit any call is refused (413), which its outbox entry keeps as failed.
 */
function callsOf(events: WebhookEventInput[]): WebhookEventInput[][] {
  const calls: WebhookEventInput[][] = [];
  let current: WebhookEventInput[] = [];
  let bytes = ENVELOPE_BYTES;
  for (const event of events) {
    // Its JSON and the comma before it.
    const size = Buffer.byteLength(JSON.stringify(event)) + 1;
    if (ENVELOPE_BYTES + size > MAX_INTERNAL_BODY_BYTES)
      throw new ApiError('payload_too_large', `Event ${event.id} (${event.type}) is ${size} bytes, more than a call between services may carry (${MAX_INTERNAL_BODY_BYTES}).`);
    if (current.length > 0 && (bytes + size > MAX_INTERNAL_BODY_BYTES || current.length === EVENTS_PER_CALL)) {
      calls.push(current);
      current = [];
      bytes = ENVELOPE_BYTES;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) calls.push(current);
  return calls;
}

/**
 * Hands events to the webhooks service, in as many calls as they need to fit; returns how many
 * deliveries they made. Any failure throws (the caller's outbox entry is then retried, or kept as
 * failed when refused), and since an event id already recorded adds nothing, retrying never sends
 * an event twice, also after some of the calls went through.
 */
export async function recordWebhookEvents(
  webhooks: InternalClient,
  applicationId: string,
  events: WebhookEventInput[],
  requestId: string,
): Promise<number> {
  const contract = webhooksInternal.recordEvents;
  let deliveries = 0;
  for (const call of callsOf(events)) {
    const answer = await webhooks.call(contract.method, contract.path, { applicationId, requestId, body: { events: call } });
    deliveries += contract.response.parse(answer).deliveries;
  }
  return deliveries;
}

/** Whether an event of a type of the application has a receiver now (webhooksInternal.hasTargets). */
export interface WebhookTargets {
  has(applicationId: string, type: WebhookEventInput['type'], requestId: string): Promise<boolean>;
}

/** The webhooks service's answer, asked each time. */
export function webhookTargets(webhooks: InternalClient): WebhookTargets {
  const contract = webhooksInternal.hasTargets;
  return {
    async has(applicationId, type, requestId) {
      return contract.response.parse(await webhooks.call(contract.method, contract.path(type), { applicationId, requestId })).subscribed;
    },
  };
}

/** Bounds the reused answers: one per application and event type, a few dozen bytes each. */
export const REUSED_TARGETS_MAX = 10_000;

/**
 * The webhooks service's answer, reused while the application's webhook-targets version is the one
 * it was filed under (reused-answers.ts). The webhooks service writes a new version after its own
 * writes and whenever identity says the application changed (its event URL or subscriptions).
 */
export function reusingWebhookTargets(inner: WebhookTargets, versions: ApplicationVersions, logger: Logger): WebhookTargets {
  const answers = new ReusedAnswers<boolean>(versions, 'webhook-targets', logger, { maxWeight: REUSED_TARGETS_MAX, weightOf: () => 1 });
  return {
    has: (applicationId, type, requestId) => answers.answer(applicationId, type, () => inner.has(applicationId, type, requestId)),
  };
}
