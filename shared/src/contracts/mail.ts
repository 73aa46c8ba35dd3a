/**
 * The mail service's internal HTTP API, and what it asks identity when a mail is due. The
 * notification worker's relay hands over each `reply` and `thread_action` notification it
 * relays; the mail service records one mail per notification (so per recipient) and sends it
 * after the delay. Producer and consumer both validate against these schemas.
 */
import type { InternalClient } from '../http/internal-client.js';
import { s, type Infer } from '../schema/index.js';

/** The notification kinds that may cause a mail (original-extras §5.1): never reactions or `external` ones. */
export const MAILED_KINDS = ['reply', 'thread_action'] as const;

const mailCandidate = s.object({
  /** The notification's internal id: a second hand-over of it records nothing more. */
  notificationId: s.string({ minLength: 1 }),
  kind: s.enum(MAILED_KINDS),
  recipientId: s.string({ minLength: 1 }),
  actorId: s.string({ minLength: 1 }),
  messageRef: s.string({ minLength: 1 }),
  threadRef: s.string({ minLength: 1 }),
  replyActions: s.array(s.string()).nullable(),
  threadActionType: s.string().nullable(),
  linkBase: s.string(),
  requestId: s.string({ minLength: 1 }),
});

export type MailCandidate = Infer<typeof mailCandidate>;

export const mailInternal = {
  recordNotifications: {
    method: 'POST',
    path: '/internal/mail/notifications',
    request: s.object({ notifications: s.array(mailCandidate, { minItems: 1 }) }),
    response: s.object({ recorded: s.integer({ minimum: 0 }) }),
  },
} as const;

/** Hands the notifications over; any failure throws, so the caller's outbox entries are retried. */
export async function recordMailCandidates(mail: InternalClient, applicationId: string, notifications: readonly MailCandidate[], requestId: string): Promise<number> {
  if (notifications.length === 0) return 0;
  const contract = mailInternal.recordNotifications;
  const body = contract.request.parse({ notifications });
  return contract.response.parse(await mail.call(contract.method, contract.path, { applicationId, requestId, body })).recorded;
}

/**
 * What a mail needs of identity, in one call: the application's name and mail settings, and the
 * users named with their address, notification channels and membership of the thread's group.
 */
export const identityMailContext = {
  method: 'POST',
  path: '/internal/mail-context',
  request: s.object({ userIds: s.array(s.string()), groupId: s.string() }),
  response: s.object({
    application: s.object({
      name: s.string(),
      redirectURI: s.string().nullable(),
      emailSettings: s.unknown(),
    }),
    users: s.array(
      s.object({
        id: s.string(),
        name: s.string().nullable(),
        shortName: s.string().nullable(),
        email: s.string().nullable(),
        status: s.enum(['active', 'deleted']),
        sendViaEmail: s.boolean(),
        inGroup: s.boolean(),
      }),
    ),
  }),
} as const;

export type MailContext = Infer<typeof identityMailContext.response>;
