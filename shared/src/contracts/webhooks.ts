/**
 * The webhooks service's internal HTTP API: the relays of the services that record events hand
 * them over here. Producer and consumer both validate against these schemas.
 */
import type { InternalClient } from '../http/internal-client.js';
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

/**
 * Hands events to the webhooks service; returns how many deliveries they made. Any failure throws
 * (the caller's outbox entry is then retried), and since an event id already recorded adds
 * nothing, retrying never sends an event twice.
 */
export async function recordWebhookEvents(
  webhooks: InternalClient,
  applicationId: string,
  events: WebhookEventInput[],
  requestId: string,
): Promise<number> {
  const contract = webhooksInternal.recordEvents;
  const answer = await webhooks.call(contract.method, contract.path, { applicationId, requestId, body: { events } });
  return contract.response.parse(answer).deliveries;
}

/** Whether an event of `type` of the application has a receiver now (webhooksInternal.hasTargets). */
export async function hasWebhookTargets(webhooks: InternalClient, applicationId: string, type: WebhookEventInput['type'], requestId: string): Promise<boolean> {
  const contract = webhooksInternal.hasTargets;
  return contract.response.parse(await webhooks.call(contract.method, contract.path(type), { applicationId, requestId })).subscribed;
}
