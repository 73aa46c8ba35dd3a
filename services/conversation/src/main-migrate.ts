/** Creates the database if needed and applies the conversation service's pending migrations. */
import { runMigrateMain } from '@collab/shared/storage';
import { createConversationDataSource } from './data-source.js';
import { CONVERSATION_SCHEMA } from './entities/index.js';

runMigrateMain({ service: 'conversation', schema: CONVERSATION_SCHEMA, createDataSource: createConversationDataSource });
