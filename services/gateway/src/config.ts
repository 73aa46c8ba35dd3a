import { commonVars, loadConfig, metricsPortVar, vars } from '@collab/shared';

export const gatewayConfigSpec = {
  REDIS_URL: commonVars.REDIS_URL,
  REDIS_PREFIX: commonVars.REDIS_PREFIX,
  INTERNAL_TOKEN: commonVars.INTERNAL_TOKEN,
  LOG_LEVEL: commonVars.LOG_LEVEL,
  PORT: vars.port('Public port of the gateway', 8080),
  METRICS_PORT: metricsPortVar(9080),
  ACCESS_TOKEN_SECRET: vars.secret('Key that verifies access tokens (same value as identity)'),
  IDENTITY_URL: vars.url('Internal URL of the identity service', 'http://127.0.0.1:8081'),
  CONVERSATION_URL: vars.url('Internal URL of the conversation service', 'http://127.0.0.1:8082'),
  NOTIFICATION_URL: vars.url('Internal URL of the notification service', 'http://127.0.0.1:8083'),
  UPSTREAM_TIMEOUT_MS: vars.integer('How long the gateway waits for a service before 504', 30_000),
  CREDENTIALS_CACHE_TTL_MS: vars.integer('How long verified credentials are cached', 60_000),
  ADMIN_USERNAME: vars.string('Operator user name of the queue dashboard /admin/queues (empty disables it)', ''),
  ADMIN_PASSWORD: vars.secret('Operator password of the queue dashboard /admin/queues (empty disables it)', ''),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(gatewayConfigSpec, env);
}
