import type { ConversationDirectory, Logger, MailContext, Producer } from '@collab/shared';
import type { DataSource } from 'typeorm';
import type { MailTransport } from './mails/transport.js';

/** What the mail service's use cases need: its database, the queue, identity and conversation, the SMTP transport and its settings. */
export interface MailServiceContext {
  db: DataSource;
  logger: Logger;
  queue: Producer<'mail-send'>;
  /** What identity knows of the application and the users of one mail (null: the application is gone). */
  mailContext(applicationId: string, userIds: readonly string[], groupId: string, requestId: string): Promise<MailContext | null>;
  conversation: ConversationDirectory;
  /** The application's current secret (signs the redirect's cord_notifications token). */
  applicationSecret(applicationId: string, requestId: string): Promise<string>;
  /** The user stops following the thread in the app (a mail's unsubscribe link). */
  unsubscribeInApp(applicationId: string, threadRef: string, userId: string, requestId: string): Promise<void>;
  /** A reply by mail as the message `messageID` of the user in the thread (found if already posted); null when the thread is gone. */
  postReply(
    applicationId: string,
    reply: { threadRef: string; userId: string; messageID: string; paragraphs: string[] },
    linkBase: string,
    requestId: string,
  ): Promise<string | null>;
  transport: MailTransport;
  settings: {
    delaySeconds: number;
    mailFrom: string;
    emailDomain: string;
    publicUrl: string;
    /** Replies by mail are on (INBOUND_EMAIL_USERNAME): mails then carry a Reply-To naming them. */
    inboundEmail: boolean;
  };
}
