import { commonVars, ConfigError, loadConfig, metricsPortVar, vars } from '@collab/shared';

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
  WEBHOOKS_URL: vars.url('Internal URL of the webhooks service', 'http://127.0.0.1:8084'),
  MAIL_URL: vars.url('Internal URL of the mail service', 'http://127.0.0.1:8085'),
  UPSTREAM_TIMEOUT_MS: vars.integer('How long the gateway waits for a service before 504', 30_000),
  CREDENTIALS_CACHE_TTL_MS: vars.integer('How long verified credentials are cached', 60_000),
  ADMIN_USERNAME: vars.string('Operator user name of the queue dashboard /admin/queues (empty disables it)', ''),
  ADMIN_PASSWORD: vars.secret('Operator password of the queue dashboard /admin/queues (empty disables it)', ''),
  INBOUND_EMAIL_USERNAME: vars.string('User name the inbound-mail parser posts replies to POST /email/inbound with (empty: replies by mail are off, the route answers 404)', ''),
  INBOUND_EMAIL_PASSWORD: vars.secret('Its password (empty: replies by mail are off)', ''),
  CONSOLE: vars.onOff('The web console at /console (on or off)', true),
  CONSOLE_SESSION_HOURS: vars.integer('How long a console sign-in lasts, in hours', 12),
  TRUSTED_PROXY_CIDRS: vars.cidrs(
    "Comma-separated CIDR ranges of the load balancers or ingress in front of the gateway, whose X-Forwarded-For names the client to the console's sign-in limit (empty: the connection's address is the client)",
    [],
  ),
  RATE_LIMIT_PER_MINUTE: vars.integer('Requests a minute one application (or customer) may make, across all gateway replicas (0: no limit)', 0),
  RATE_LIMIT_BURST: vars.integer('Requests one application (or customer) may make at once (0: RATE_LIMIT_PER_MINUTE)', 0),
  REQUEST_TIMEOUT_MS: vars.integer('How long a client may take to send a whole request before 408 (0: no limit)', 300_000),
  HEADERS_TIMEOUT_MS: vars.integer('How long a client may take to send the request headers before 408 (0: no limit)', 20_000),
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(gatewayConfigSpec, env);
  // Node's HTTP server refuses a headers deadline later than the whole request's.
  if (config.REQUEST_TIMEOUT_MS > 0 && config.HEADERS_TIMEOUT_MS > config.REQUEST_TIMEOUT_MS)
    throw new ConfigError([`HEADERS_TIMEOUT_MS is invalid: must not exceed REQUEST_TIMEOUT_MS (${config.REQUEST_TIMEOUT_MS})`]);
  if (config.CONSOLE_SESSION_HOURS < 1) throw new ConfigError(['CONSOLE_SESSION_HOURS is invalid: must be at least 1']);
  return config;
}
