/**
 * Conversation worker: drains the conversation-purge queue and relays the recorded events to the
 * webhooks service. Scaled separately from the API.
 */
import { runWorkerMain } from '@collab/shared';
import { loadConversationWorkerConfig } from './config.js';
import { createConversationDataSource } from './data-source.js';
import { pendingPurges, purgeJobs } from './jobs/purge.jobs.js';
import { conversationContext, conversationEvents } from './service.js';

runWorkerMain({
  name: 'conversation-worker',
  queue: 'conversation-purge',
  loadConfig: () => loadConversationWorkerConfig(),
  createDataSource: createConversationDataSource,
  jobs: (db, config) => purgeJobs(db, config.PURGE_BATCH_SIZE),
  pendingJobs: pendingPurges,
  outbox: (db, config, logger) => conversationEvents(conversationContext(db, config, logger), config, logger),
});
