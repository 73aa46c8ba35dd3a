/**
 * The mail schema as TypeORM entities: one row per mail a notification may cause (its recipient's
 * notification), which is also the sent-log that keeps a mail from leaving twice, and the threads
 * users unsubscribed from by mail.
 */
import { EntitySchema } from 'typeorm';

export const MAIL_SCHEMA = 'mail';

/**
 * `pending` until its job runs; `sending` is written before the mail is handed to SMTP and
 * `sent` after, so a mail found `sending` may have left and is never sent again; `skipped` with
 * the gate that stopped it; `failed` when SMTP refused it for a day.
 */
export type MailStatus = 'pending' | 'sending' | 'sent' | 'skipped' | 'failed';

export interface MailRow {
  id: string;
  applicationId: string;
  /** The notification's internal id in the notification service: one mail per notification (and so per recipient). */
  notificationId: string;
  kind: 'reply' | 'thread_action';
  recipientId: string;
  actorId: string;
  messageRef: string;
  threadRef: string;
  replyActions: string[] | null;
  threadActionType: string | null;
  /** The public base URL the notification's request came through, for the links. */
  linkBase: string;
  status: MailStatus;
  /** Why it was skipped or failed. */
  outcome: string | null;
  /** The secret of the mail's unsubscribe and redirect links (random, unguessable). */
  linkToken: string;
  sendAfter: Date;
  sentAt: Date | null;
  createdAt: Date;
}

export const MailEntity = new EntitySchema<MailRow>({
  name: 'Mail',
  tableName: 'mails',
  schema: MAIL_SCHEMA,
  columns: {
    id: { type: 'uuid', primary: true },
    applicationId: { name: 'application_id', type: 'uuid' },
    notificationId: { name: 'notification_id', type: 'text' },
    kind: { type: 'text' },
    recipientId: { name: 'recipient_id', type: 'text', collation: 'C' },
    actorId: { name: 'actor_id', type: 'text', collation: 'C' },
    messageRef: { name: 'message_ref', type: 'text' },
    threadRef: { name: 'thread_ref', type: 'text' },
    replyActions: { name: 'reply_actions', type: 'text', array: true, nullable: true },
    threadActionType: { name: 'thread_action_type', type: 'text', nullable: true },
    linkBase: { name: 'link_base', type: 'text' },
    status: { type: 'text', default: 'pending' },
    outcome: { type: 'text', nullable: true },
    linkToken: { name: 'link_token', type: 'text' },
    sendAfter: { name: 'send_after', type: 'timestamptz' },
    sentAt: { name: 'sent_at', type: 'timestamptz', nullable: true },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
  },
  uniques: [
    { name: 'mails_notification_key', columns: ['applicationId', 'notificationId'] },
    { name: 'mails_link_token_key', columns: ['linkToken'] },
  ],
  indices: [
    { name: 'mails_pending_idx', columns: ['status', 'sendAfter'] },
    { name: 'mails_thread_recipient_idx', columns: ['applicationId', 'threadRef', 'recipientId'] },
  ],
});

/** A user who unsubscribed from a thread by mail: no more mail of that thread, ever (original-extras §5.7). */
export interface ThreadOptOutRow {
  applicationId: string;
  threadRef: string;
  userId: string;
  createdAt: Date;
}

export const ThreadOptOutEntity = new EntitySchema<ThreadOptOutRow>({
  name: 'ThreadOptOut',
  tableName: 'thread_opt_outs',
  schema: MAIL_SCHEMA,
  columns: {
    applicationId: { name: 'application_id', type: 'uuid', primary: true },
    threadRef: { name: 'thread_ref', type: 'text', primary: true },
    userId: { name: 'user_id', type: 'text', primary: true, collation: 'C' },
    createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
  },
});

export const mailEntities = [MailEntity, ThreadOptOutEntity];
