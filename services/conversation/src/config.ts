import { commonVars, loadConfig, vars } from '@collab/shared';

export const conversationConfigSpec = {
  ...commonVars,
  PORT: vars.port('Port of the conversation HTTP API (internal)', 8082),
  DB_POOL_SIZE: vars.integer('PostgreSQL connections per process', 10),
};

export type ConversationConfig = ReturnType<typeof loadConversationConfig>;

export function loadConversationConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(conversationConfigSpec, env);
}
