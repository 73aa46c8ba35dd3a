import { commonVars, loadConfig, metricsPortVar, vars, workerVars } from '@collab/shared';

export const notificationConfigSpec = {
  ...commonVars,
  ...workerVars,
  PORT: vars.port('Port of the notification HTTP API (internal)', 8083),
  /** The API's; the notification worker defaults to WORKER_METRICS_PORTS['notification-purge'] (runWorkerMain). */
  METRICS_PORT: metricsPortVar(9083),
  DB_POOL_SIZE: vars.integer('PostgreSQL connections per process', 10),
  IDENTITY_URL: vars.url('Internal URL of the identity service', 'http://127.0.0.1:8081'),
};

export type NotificationConfig = ReturnType<typeof loadNotificationConfig>;

export function loadNotificationConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(notificationConfigSpec, env);
}
