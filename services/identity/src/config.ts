import {
  commonVars,
  type ConfigOf,
  encryptionKeyVar,
  idempotencyVars,
  loadConfig,
  metricsPortVar,
  outboundVars,
  serviceDatabaseVar,
  vars,
  withServiceDatabase,
  WORKER_METRICS_PORTS,
  workerVars,
} from '@collab/shared';

export const identityConfigSpec = {
  ...commonVars,
  IDENTITY_DATABASE_URL: serviceDatabaseVar('identity'),
  // PUT /v1/applications/<ID> verifies a new eventWebhookURL by calling it.
  ...outboundVars,
  PORT: vars.port('Port of the identity HTTP API (internal)', 8081),
  METRICS_PORT: metricsPortVar(9081),
  ACCESS_TOKEN_SECRET: vars.secret('Key that signs the access tokens of POST /v1/authorize'),
  SECRETS_ENCRYPTION_KEY: encryptionKeyVar('Key that encrypts application and customer secrets at rest (openssl rand -hex 32)'),
  SECRET_ROTATION_GRACE_HOURS: vars.integer(
    "How long server tokens signed with an application's previous secret keep working after POST /v1/applications/<ID>/secret, in hours (0: not at all)",
    24,
  ),
  CUSTOMER_ID: vars.uuid('Customer ensured at boot (with CUSTOMER_SECRET)', ''),
  CUSTOMER_SECRET: vars.string('Secret of CUSTOMER_ID', ''),
  DB_POOL_SIZE: vars.integer('PostgreSQL connections per process', 10),
  CONVERSATION_URL: vars.url('Internal URL of the conversation service (deletion cascade)', 'http://127.0.0.1:8082'),
  NOTIFICATION_URL: vars.url('Internal URL of the notification service (deletion cascade)', 'http://127.0.0.1:8083'),
  WEBHOOKS_URL: vars.url('Internal URL of the webhooks service (deletion cascade)', 'http://127.0.0.1:8084'),
  MAIL_URL: vars.url('Internal URL of the mail service (deletion cascade)', 'http://127.0.0.1:8085'),
  PRESENCE_TTL_SECONDS: vars.integer('How long ephemeral presence lasts after its latest update, in seconds', 30),
  BATCH_WAIT_MS: vars.integer('How long POST /v1/batch waits for its job before answering 202 with a jobID', 8000),
  ...idempotencyVars,
};

export type IdentityConfig = ReturnType<typeof loadIdentityConfig>;

export function loadIdentityConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(identityConfigSpec, env);
  if (Boolean(config.CUSTOMER_ID) !== Boolean(config.CUSTOMER_SECRET))
    throw new Error('Invalid configuration:\n  CUSTOMER_ID and CUSTOMER_SECRET must be set together');
  return withServiceDatabase(config, 'identity');
}

/**
 * What a CLI of identity reads: identity's database (DATABASE_URL, or IDENTITY_DATABASE_URL when
 * identity has its own) and the variables of identity's spec it names, nothing else.
 */
export function loadIdentityCliConfig<K extends keyof typeof identityConfigSpec>(names: readonly K[]) {
  const spec: Partial<typeof identityConfigSpec> = {
    DATABASE_URL: identityConfigSpec.DATABASE_URL,
    IDENTITY_DATABASE_URL: identityConfigSpec.IDENTITY_DATABASE_URL,
  };
  for (const name of names) Object.assign(spec, { [name]: identityConfigSpec[name] });
  const config = loadConfig(spec as typeof identityConfigSpec) as Pick<ConfigOf<typeof identityConfigSpec>, 'DATABASE_URL' | 'IDENTITY_DATABASE_URL' | K>;
  return withServiceDatabase(config, 'identity');
}

/**
 * The identity worker (identity-batch queue, and the relay of the deletion outbox into the other
 * services) needs the database, Redis and the other services' URLs, not the API's secrets.
 */
export const identityWorkerConfigSpec = {
  ...commonVars,
  IDENTITY_DATABASE_URL: identityConfigSpec.IDENTITY_DATABASE_URL,
  WORKER_CONCURRENCY: workerVars.WORKER_CONCURRENCY,
  JOB_LOCK_MS: workerVars.JOB_LOCK_MS,
  OUTBOX_POLL_MS: workerVars.OUTBOX_POLL_MS,
  DB_POOL_SIZE: identityConfigSpec.DB_POOL_SIZE,
  CONVERSATION_URL: identityConfigSpec.CONVERSATION_URL,
  NOTIFICATION_URL: identityConfigSpec.NOTIFICATION_URL,
  WEBHOOKS_URL: identityConfigSpec.WEBHOOKS_URL,
  MAIL_URL: identityConfigSpec.MAIL_URL,
  METRICS_PORT: metricsPortVar(WORKER_METRICS_PORTS['identity-batch']),
  BATCH_RETENTION_HOURS: vars.integer('How long GET /v1/batch/<jobID> reports a completed batch, in hours', 24),
  BATCH_FAILED_RETENTION_HOURS: vars.integer('How long GET /v1/batch/<jobID> reports a failed batch, in hours', 7 * 24),
  // Imports of customer dumps store the dump's customer and application secrets, sealed.
  SECRETS_ENCRYPTION_KEY: identityConfigSpec.SECRETS_ENCRYPTION_KEY,
};

export function loadIdentityWorkerConfig(env: NodeJS.ProcessEnv = process.env) {
  return withServiceDatabase(loadConfig(identityWorkerConfigSpec, env), 'identity');
}
