import { commonVars, loadConfig, metricsPortVar, serviceDatabaseVar, vars, withServiceDatabase, workerVars } from '@collab/shared';

/** The mail API: records the mails notifications cause and serves the links in them. */
export const mailConfigSpec = {
  ...commonVars,
  MAIL_DATABASE_URL: serviceDatabaseVar('mail'),
  ...workerVars,
  PORT: vars.port('Port of the mail HTTP API (internal)', 8085),
  /** The API's; the mail worker defaults to WORKER_METRICS_PORTS['mail-send'] (runWorkerMain). */
  METRICS_PORT: metricsPortVar(9085),
  DB_POOL_SIZE: vars.integer('PostgreSQL connections per process', 10),
  IDENTITY_URL: vars.url('Internal URL of the identity service', 'http://127.0.0.1:8081'),
  CONVERSATION_URL: vars.url('Internal URL of the conversation service', 'http://127.0.0.1:8082'),
  EMAIL_DELAY_SECONDS: vars.integer('Seconds between a reply, mention or resolve and its mail (a read, edit or deletion meanwhile is reflected)', 40),
};

/** The mail worker also renders and sends the mails. */
export const mailWorkerConfigSpec = {
  ...mailConfigSpec,
  SMTP_URL: vars.string('SMTP server the mails go through, e.g. smtps://user:password@smtp.example.com:465 (unset: no mail leaves, each is logged at debug level)', ''),
  MAIL_FROM: vars.string('Sender of the mails of applications without their own emailSettings.sender', 'Notifications <notifications@collab.invalid>'),
  EMAIL_DOMAIN: vars.string("Domain of the mails' Message-ID", 'collab.invalid'),
  PUBLIC_URL: vars.string('Public base URL of the API for the links in mails (default: that of the request that caused the mail)', ''),
  // Only whether it is set: the gateway checks the credentials.
  INBOUND_EMAIL_USERNAME: vars.string("Set (as on the gateway): mails carry a Reply-To, <sender's local part>-<token>@EMAIL_DOMAIN, whose replies POST /email/inbound posts", ''),
};

export type MailConfig = ReturnType<typeof loadMailConfig>;
export type MailWorkerConfig = ReturnType<typeof loadMailWorkerConfig>;

export function loadMailConfig(env: NodeJS.ProcessEnv = process.env) {
  return withServiceDatabase(loadConfig(mailConfigSpec, env), 'mail');
}

export function loadMailWorkerConfig(env: NodeJS.ProcessEnv = process.env) {
  return withServiceDatabase(loadConfig(mailWorkerConfigSpec, env), 'mail');
}
