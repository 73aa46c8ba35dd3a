import { commonVars, idempotencyVars, loadConfig, metricsPortVar, serviceDatabaseVar, vars, withServiceDatabase, workerVars } from '@collab/shared';

export const notificationConfigSpec = {
  ...commonVars,
  NOTIFICATION_DATABASE_URL: serviceDatabaseVar('notification'),
  ...workerVars,
  PORT: vars.port('Port of the notification HTTP API (internal)', 8083),
  /** The API's; the notification worker defaults to WORKER_METRICS_PORTS['notification-purge'] (runWorkerMain). */
  METRICS_PORT: metricsPortVar(9083),
  DB_POOL_SIZE: vars.integer('PostgreSQL connections per process', 10),
  IDENTITY_URL: vars.url('Internal URL of the identity service', 'http://127.0.0.1:8081'),
  /** The messages and threads that notifications show are asked of it. */
  CONVERSATION_URL: vars.url('Internal URL of the conversation service', 'http://127.0.0.1:8082'),
  ...idempotencyVars,
};

/**
 * The notification worker builds notifications as the API shows them, and its outbox relay hands
 * their events to the webhooks service and the notifications that may cause a mail to the mail service.
 */
export const notificationWorkerConfigSpec = {
  ...notificationConfigSpec,
  WEBHOOKS_URL: vars.url('Internal URL of the webhooks service', 'http://127.0.0.1:8084'),
  MAIL_URL: vars.url('Internal URL of the mail service', 'http://127.0.0.1:8085'),
};

export type NotificationConfig = ReturnType<typeof loadNotificationConfig>;
export type NotificationWorkerConfig = ReturnType<typeof loadNotificationWorkerConfig>;

export function loadNotificationConfig(env: NodeJS.ProcessEnv = process.env) {
  return withServiceDatabase(loadConfig(notificationConfigSpec, env), 'notification');
}

export function loadNotificationWorkerConfig(env: NodeJS.ProcessEnv = process.env) {
  return withServiceDatabase(loadConfig(notificationWorkerConfigSpec, env), 'notification');
}
