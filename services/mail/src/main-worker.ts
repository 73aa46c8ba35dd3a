/** Mail worker: sends the mails (mail-send queue) after their delay. Scaled separately from the API. */
import { createLogger, createProducer, runWorkerMain } from '@collab/shared';
import { loadMailWorkerConfig } from './config.js';
import { createMailDataSource } from './data-source.js';
import { mailJobs, pendingMails } from './jobs/mail.jobs.js';
import { mailContext } from './service.js';

runWorkerMain({
  name: 'mail-worker',
  queue: 'mail-send',
  loadConfig: () => loadMailWorkerConfig(),
  createDataSource: createMailDataSource,
  jobs: (db, config, onShutdown) => {
    const logger = createLogger('mail-worker', config.LOG_LEVEL);
    const queue = createProducer('mail-send', { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
    const ctx = mailContext(config, db, queue, logger);
    onShutdown(async () => {
      await queue.close();
      ctx.transport.close();
    });
    return mailJobs(ctx);
  },
  pendingJobs: (db) => pendingMails(db),
});
