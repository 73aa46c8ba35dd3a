import { commonVars, idempotencyVars, loadConfig, metricsPortVar, outboundVars, serviceDatabaseVar, vars, withServiceDatabase, workerVars } from '@collab/shared';

export const conversationConfigSpec = {
  ...commonVars,
  CONVERSATION_DATABASE_URL: serviceDatabaseVar('conversation'),
  ...workerVars,
  PORT: vars.port('Port of the conversation HTTP API (internal)', 8082),
  /** The API's; the conversation worker defaults to WORKER_METRICS_PORTS['conversation-purge'] (runWorkerMain). */
  METRICS_PORT: metricsPortVar(9082),
  DB_POOL_SIZE: vars.integer('PostgreSQL connections per process', 10),
  IDENTITY_URL: vars.url('Internal URL of the identity service', 'http://127.0.0.1:8081'),
  FILE_URL_SECRET: vars.secret('Key that signs file download URLs'),
  MAX_FILE_BYTES: vars.integer('Largest accepted file upload, in bytes', 100 * 1024 * 1024),
  PUBLIC_URL: vars.string('Public base URL of the API for download links (default: from the request)', ''),
  /** Read by the API, which queues the preview jobs; the worker fetches the pages. */
  LINK_PREVIEWS: vars.onOff('Link previews of the URLs in messages (on/off)', true),
  ...idempotencyVars,
};

/**
 * The conversation worker builds what the API does (events carry GET views), its outbox relay
 * hands what messages cause to the notification and webhooks services, and it fetches the pages
 * of link previews.
 */
export const conversationWorkerConfigSpec = {
  ...conversationConfigSpec,
  ...outboundVars,
  LINK_PREVIEW_CONCURRENCY: vars.integer('Link-preview jobs one conversation worker runs at once (each fetches up to 10 pages)', 8),
  LINK_PREVIEW_CACHE_SECONDS: vars.integer('How long a fetched page preview is reused for the same URL (0: not cached)', 3600),
  LINK_PREVIEW_FAILURE_CACHE_SECONDS: vars.integer('How long a page that gave no preview is not fetched again (0: not cached)', 300),
  NOTIFICATION_URL: vars.url('Internal URL of the notification service', 'http://127.0.0.1:8083'),
  WEBHOOKS_URL: vars.url('Internal URL of the webhooks service', 'http://127.0.0.1:8084'),
};

export type ConversationConfig = ReturnType<typeof loadConversationConfig>;
export type ConversationWorkerConfig = ReturnType<typeof loadConversationWorkerConfig>;

export function loadConversationConfig(env: NodeJS.ProcessEnv = process.env) {
  return withServiceDatabase(loadConfig(conversationConfigSpec, env), 'conversation');
}

export function loadConversationWorkerConfig(env: NodeJS.ProcessEnv = process.env) {
  return withServiceDatabase(loadConfig(conversationWorkerConfigSpec, env), 'conversation');
}
