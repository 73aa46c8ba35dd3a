import { createServiceDataSource } from '@collab/shared/storage';
import { CONVERSATION_SCHEMA, conversationEntities } from './entities/index.js';
import { conversationMigrations } from './migrations/index.js';

export function createConversationDataSource(url: string, poolSize?: number) {
  return createServiceDataSource({
    url,
    schema: CONVERSATION_SCHEMA,
    entities: conversationEntities,
    migrations: conversationMigrations,
    poolSize,
    applicationName: 'collab-conversation',
  });
}
