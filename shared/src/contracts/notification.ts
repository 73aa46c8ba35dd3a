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

export const notificationInternal = {
  /**
   * Creates notifications of the application (the application header) for one message, all from
   * one sender. `sourceId` is the outbox entry that caused them: a recipient already notified for
   * it gets nothing more, so a relay retrying after a lost answer creates nothing twice.
   * `linkBase` is the public base URL for the file links of the `notification-created` events.
   * Messages and threads are conversation's internal references.
   */
  createActivity: {
    method: 'POST',
    path: '/internal/activity-notifications',
    request: s.object({
      sourceId: s.uuid(),
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
    }),
    response: s.object({ created: s.integer({ minimum: 0 }) }),
  },
} as const;

export type ActivityNotifications = Infer<typeof notificationInternal.createActivity.request>;

/**
 * Asks the notification service to create the notifications; returns how many it created (0 when
 * a previous call created them). Any failure throws, so the caller's outbox entry is retried.
 */
export async function createActivityNotifications(
  notification: InternalClient,
  applicationId: string,
  body: ActivityNotifications,
  requestId: string,
): Promise<number> {
  const contract = notificationInternal.createActivity;
  const answer = await notification.call(contract.method, contract.path, { applicationId, requestId, body: contract.request.parse(body) });
  return contract.response.parse(answer).created;
}
