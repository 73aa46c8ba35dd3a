/**
 * The webhook event catalogue: every event type receivers get, with the schema of its event
 * object (built from the same views as the REST answers) and whether an application URL whose
 * subscriptions were never set receives it. The type enum, the default subscriptions, the route
 * text and the OpenAPI `webhooks:` section all come from here: a new event type is one entry.
 */
import { REPLY_ACTIONS } from '../contracts/notification.js';
import { messageView, notificationUserView, notificationView, threadView } from '../routes/views.js';
import { s, type Infer, type ObjectSchema, type Shape } from '../schema/index.js';

interface EventDefinition {
  description: string;
  /** The event object, as sent under `event` and spread at the top level of the body. */
  payload: ObjectSchema<Shape>;
  /** Received by an application URL whose subscriptions were never set. */
  subscribedByDefault: boolean;
  /** Recorded from the services' outboxes and logged as deliveries (url-verification is sent once, by identity). */
  recorded: boolean;
}

const threadMessageAdded = s.object({
  threadID: s.string(),
  messageID: s.string(),
  // Deprecated aliases of groupID.
  orgID: s.string(),
  organizationID: s.string(),
  groupID: s.string(),
  applicationID: s.uuid(),
  projectID: s.uuid(),
  author: notificationUserView,
  content: messageView.shape.content,
  plaintext: s.string(),
  url: s.string().nullable(),
  messageType: messageView.shape.type,
  metadata: s.flatObject(),
  message: s.object({ ...messageView.shape, author: notificationUserView }),
  thread: threadView,
  usersToNotify: s.array(s.object({ ...notificationUserView.shape, replyActions: s.array(s.enum(REPLY_ACTIONS)).nullable() })),
});

export const WEBHOOK_EVENTS = {
  'thread-message-added': {
    description: 'A message was added to a thread (by a user or as an action message), with the users it notifies.',
    payload: threadMessageAdded,
    subscribedByDefault: true,
    recorded: true,
  },
  'notification-created': {
    description: 'A notification was created, as its recipient’s list shows it.',
    payload: s.object({ ...notificationView.shape, recipientUserID: s.string() }),
    subscribedByDefault: true,
    recorded: true,
  },
  'url-verification': {
    description: 'Sent when an application’s eventWebhookURL is set: the URL must answer 200.',
    payload: s.object({ message: s.string() }),
    subscribedByDefault: false,
    recorded: false,
  },
} as const satisfies Record<string, EventDefinition>;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;
export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENTS) as [WebhookEventType, ...WebhookEventType[]];

/** The event types services record for delivery. */
export type RecordedEventType = { [T in WebhookEventType]: (typeof WEBHOOK_EVENTS)[T]['recorded'] extends true ? T : never }[WebhookEventType];
export const RECORDED_EVENT_TYPES = WEBHOOK_EVENT_TYPES.filter((type) => WEBHOOK_EVENTS[type].recorded) as [RecordedEventType, ...RecordedEventType[]];

/** What an application URL whose subscriptions were never set (null) receives. */
export const DEFAULT_SUBSCRIPTIONS: readonly WebhookEventType[] = WEBHOOK_EVENT_TYPES.filter((type) => WEBHOOK_EVENTS[type].subscribedByDefault);

/** The event object of one type. */
export type WebhookEventPayload<T extends WebhookEventType> = Infer<(typeof WEBHOOK_EVENTS)[T]['payload']>;

/**
 * The body a receiver gets for an event of `type` (webhookEnvelope): the envelope's keys, the
 * event under `event` and its keys at the top level, an event key winning over an envelope key.
 */
export function webhookBodySchema(type: WebhookEventType) {
  const payload: ObjectSchema<Shape> = WEBHOOK_EVENTS[type].payload;
  return s.object({
    type: s.literal(type),
    timestamp: s.string().describe('Milliseconds since the epoch when this attempt was signed (X-Cord-Timestamp).'),
    applicationID: s.uuid(),
    projectID: s.uuid(),
    event: payload,
    ...payload.shape,
  });
}
