/**
 * The notification service's internal HTTP API: the conversation worker's relay asks it to create
 * the notifications that messages, reactions and thread actions cause. Producer and consumer both
 * validate against these schemas.
 */
import type { InternalClient } from '../http/internal-client.js';
import { s, type Infer } from '../schema/index.js';

/** Why a reply's recipient is told, in the order receivers expect them. */
export const REPLY_ACTIONS = ['mention', 'attach-file', 'create-thread'] as const;
export type ReplyAction = (typeof REPLY_ACTIONS)[number];

/**
 * The notifications one outbox entry causes, all from one sender about one message. `sourceId` is
 * the entry: a recipient already notified for it gets nothing more, so a relay retrying after a
 * lost answer creates nothing twice. `requestId` is the entry's, carried into the logs and events
 * of what it creates. `linkBase` is the public base URL for the file links of the
 * `notification-created` events. Messages and threads are conversation's internal references.
 */
const activity = s.object({
  sourceId: s.uuid(),
  requestId: s.string({ minLength: 1 }),
  linkBase: s.string(),
  senderId: s.string({ minLength: 1 }),
  messageRef: s.string({ minLength: 1 }),
  threadRef: s.string({ minLength: 1 }),
  /** A reply: why each recipient is told (possibly nothing: a plain reply to a subscriber). */
  replies: s.array(s.object({ recipientId: s.string({ minLength: 1 }), replyActions: s.array(s.enum(REPLY_ACTIONS)) })).optional(),
  /** A resolve or reopen of the thread: its action message is `messageRef`. */
  threadAction: s.object({ type: s.enum(['resolve', 'unresolve']), recipientIds: s.array(s.string({ minLength: 1 })) }).optional(),
  /** A new reaction to the message, for its author. */
  reaction: s.object({ recipientId: s.string({ minLength: 1 }), reaction: s.string({ minLength: 1 }) }).optional(),
});

export const notificationInternal = {
  /**
   * Creates the notifications of the application (the application header) that several outbox
   * entries cause, in one transaction: the relay hands over a whole batch of new messages in one
   * call instead of one call per message.
   */
  createActivity: {
    method: 'POST',
    path: '/internal/activity-notifications',
    request: s.object({ activities: s.array(activity, { minItems: 1 }) }),
    response: s.object({ created: s.integer({ minimum: 0 }) }),
  },
} as const;

export type ActivityNotifications = Infer<typeof activity>;

/**
 * Asks the notification service to create the notifications; returns how many it created (0 when
 * a previous call created them). Any failure throws, so the caller's outbox entries are retried.
 */
export async function createActivityNotifications(
  notification: InternalClient,
  applicationId: string,
  activities: readonly ActivityNotifications[],
  requestId: string,
): Promise<number> {
  if (activities.length === 0) return 0;
  const contract = notificationInternal.createActivity;
  const body = contract.request.parse({ activities });
  const answer = await notification.call(contract.method, contract.path, { applicationId, requestId, body });
  return contract.response.parse(answer).created;
}
