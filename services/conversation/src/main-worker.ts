/**
 * Conversation worker: drains the conversation-purge and conversation-link-previews queues and
 * relays the recorded events to the webhooks service. Scaled separately from the API.
 */
import { runWorkerMain } from '@collab/shared';
import { loadConversationWorkerConfig } from './config.js';
import { createConversationDataSource } from './data-source.js';
import { CONVERSATION_SCHEMA } from './entities/index.js';
import { pendingPurges, purgeJobs } from './jobs/purge.jobs.js';
import { conversationContext, conversationEvents, conversationLinkPreviews } from './service.js';

runWorkerMain({
  name: 'conversation-worker',
  queue: 'conversation-purge',
  loadConfig: () => loadConversationWorkerConfig(),
  createDataSource: createConversationDataSource,
  jobs: (db, config) => purgeJobs(db, { batchSize: config.PURGE_BATCH_SIZE, rowsPerSecond: config.PURGE_ROWS_PER_SECOND }),
  pendingJobs: pendingPurges,
  extraQueues: [
    {
      queue: 'conversation-link-previews',
      jobs: (db, config, onShutdown, logger) => {
        const { handlers, close } = conversationLinkPreviews(db, config, logger);
        onShutdown(close);
        return handlers;
      },
      concurrency: (config) => config.LINK_PREVIEW_CONCURRENCY,
    },
  ],
  outbox: (db, config, logger, redis) => conversationEvents(conversationContext(db, config, logger, redis), config, logger),
  idempotencyKeys: CONVERSATION_SCHEMA,
});
