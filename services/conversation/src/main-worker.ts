/** Conversation worker: drains the conversation-purge queue. Scaled separately from the API. */
import { runWorkerMain } from '@collab/shared';
import { loadConversationConfig } from './config.js';
import { createConversationDataSource } from './data-source.js';
import { pendingPurges, purgeJobs } from './jobs/purge.jobs.js';

runWorkerMain({
  name: 'conversation-worker',
  queue: 'conversation-purge',
  loadConfig: () => loadConversationConfig(),
  createDataSource: createConversationDataSource,
  jobs: (db, config) => purgeJobs(db, config.PURGE_BATCH_SIZE),
  pendingJobs: pendingPurges,
});
