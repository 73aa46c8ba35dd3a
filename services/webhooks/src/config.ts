import { commonVars, loadConfig, metricsPortVar, outboundVars, serviceDatabaseVar, vars, withServiceDatabase, workerVars } from '@collab/shared';

export const webhooksConfigSpec = {
  ...commonVars,
  WEBHOOKS_DATABASE_URL: serviceDatabaseVar('webhooks'),
  ...workerVars,
  ...outboundVars,
  PORT: vars.port('Port of the webhooks HTTP API (internal)', 8084),
  /** The API's; the webhooks worker defaults to WORKER_METRICS_PORTS['webhooks-delivery'] (runWorkerMain). */
  METRICS_PORT: metricsPortVar(9084),
  DB_POOL_SIZE: vars.integer('PostgreSQL connections per process', 10),
  IDENTITY_URL: vars.url('Internal URL of the identity service', 'http://127.0.0.1:8081'),
  CREDENTIALS_CACHE_TTL_MS: vars.integer('How long application secrets and webhook settings are cached', 60_000),
  WEBHOOK_RETRY_HOURS: vars.integer('How long after an event its failed deliveries are retried', 24),
  WEBHOOK_LOG_DAYS: vars.integer('How long the delivery log keeps an event and its deliveries', 7),
  // Deliveries mostly wait on receivers, so one worker sends many at once.
  WORKER_CONCURRENCY: vars.integer('Deliveries one webhooks worker process sends at once', 50),
};

export type WebhooksConfig = ReturnType<typeof loadWebhooksConfig>;

export function loadWebhooksConfig(env: NodeJS.ProcessEnv = process.env) {
  return withServiceDatabase(loadConfig(webhooksConfigSpec, env), 'webhooks');
}
