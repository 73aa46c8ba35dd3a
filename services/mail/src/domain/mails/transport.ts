/**
 * Where mails go: an SMTP server through nodemailer (SMTP_URL), or, with SMTP_URL unset, nowhere:
 * each mail is logged at debug level instead (decision 54).
 */
import type { Logger } from '@collab/shared';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';

export type OutgoingMail = Mail.Options;

export interface MailTransport {
  /** Resolves once the server accepted the mail; throws when it refused it or could not be reached. */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

export function createMailTransport(smtpUrl: string, logger: Logger): MailTransport {
  if (!smtpUrl) {
    return {
      async send(mail) {
        logger.debug({ to: mail.to, subject: mail.subject }, 'SMTP_URL is unset: the mail is not sent');
      },
      close() {},
    };
  }
  // A refused or unreachable server fails the job, which is retried; the timeouts bound a hung one.
  const transporter = nodemailer.createTransport(smtpUrl, { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as never);
  return {
    async send(mail) {
      await transporter.sendMail(mail);
    },
    close: () => transporter.close(),
  };
}
