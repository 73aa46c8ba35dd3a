/**
 * The views that name webhook event types. They live apart from views.ts because the event
 * catalogue (shared/src/webhooks/events.ts) is built from views.ts and these are built from it.
 */
import { s } from '../schema/index.js';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/events.js';
import { timestamp, view } from './views.js';

/** An application as listed and read; its secret is answered only by create and rotate. */
export const applicationView = view('Application', s.object({
  id: s.uuid(),
  name: s.string(),
  iconURL: s.string().nullable(),
  eventWebhookURL: s.string().nullable(),
  eventWebhookSubscriptions: s.array(s.enum(WEBHOOK_EVENT_TYPES)).nullable(),
  redirectURI: s.string().nullable(),
  emailSettings: s.record(s.unknown()).describe('E-mail settings as last written; stored, not used by this server.'),
  createdTimestamp: timestamp(),
}));


export const webhookView = view('Webhook', s.object({ id: s.string(), url: s.string(), events: s.array(s.enum(WEBHOOK_EVENT_TYPES)) }));

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;

export const deliveryView = view('Delivery', s.object({
  id: s.uuid(),
  eventID: s.uuid(),
  type: s.enum(WEBHOOK_EVENT_TYPES),
  url: s.string(),
  status: s.enum(DELIVERY_STATUSES),
  attempts: s.integer({ minimum: 0 }),
  lastStatusCode: s.integer().nullable(),
  lastError: s.string().nullable(),
  createdTimestamp: timestamp(),
  lastAttemptTimestamp: timestamp().nullable(),
  nextAttemptTimestamp: timestamp().nullable(),
}));

/** One attempt of a delivery: what the receiver answered (or why nothing came back) and how long it took. */
export const deliveryAttemptView = view('DeliveryAttempt', s.object({
  attempt: s.integer({ minimum: 1 }),
  status: s.enum(DELIVERY_STATUSES).describe('What the attempt left the delivery in: pending when another attempt follows.'),
  statusCode: s.integer().nullable(),
  error: s.string().nullable(),
  startedTimestamp: timestamp(),
  durationMs: s.integer({ minimum: 0 }),
}));

/** One delivery, with the body of its last attempt exactly as sent (null before the first). */
export const deliveryDetailsView = view('DeliveryDetails', s.object({ ...deliveryView.shape, body: s.string().nullable() }));
