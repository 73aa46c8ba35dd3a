/**
 * The conversation and notification outbox relays as their worker processes run them, for tests
 * whose system starts without relays (`outboxRelay: false`) and that decide when they run or how
 * they reach the other services.
 */
import { createLogger, createRedis, workerVars } from '@collab/shared';
import type { OutboxProcessor } from '@collab/shared/storage';
import { loadConversationWorkerConfig } from '../../services/conversation/src/config.js';
import { createConversationDataSource } from '../../services/conversation/src/data-source.js';
import { conversationContext, conversationEvents } from '../../services/conversation/src/service.js';
import { loadNotificationWorkerConfig } from '../../services/notification/src/config.js';
import { createNotificationDataSource } from '../../services/notification/src/data-source.js';
import { notificationContext, notificationEvents } from '../../services/notification/src/service.js';
import type { TestSystem } from './system.js';

export interface OutboxRelays {
  /** What the relays run, e.g. to read their backlog. */
  processors: OutboxProcessor[];
  /** Stops both relays, then closes their database connections. */
  stop(): Promise<void>;
}

/** Starts both relays on the system's database; `conversationEnv` overrides the conversation worker's variables. */
export async function startOutboxRelays(system: TestSystem, conversationEnv: Record<string, string> = {}): Promise<OutboxRelays> {
  const logger = createLogger('test', 'silent');
  const conversationConfig = loadConversationWorkerConfig({ ...system.env, ...conversationEnv });
  const notificationConfig = loadNotificationWorkerConfig(system.env);
  const conversationDb = createConversationDataSource(system.env.DATABASE_URL, 2);
  const notificationDb = createNotificationDataSource(system.env.DATABASE_URL, 2);
  const databases = [conversationDb, notificationDb];
  for (const db of databases) await db.initialize();
  // As a worker's: short commands fail fast while Redis is away.
  const redis = createRedis(system.env.REDIS_URL, { maxRetriesPerRequest: 1 });
  const processors = [
    conversationEvents(conversationContext(conversationDb, conversationConfig, logger, redis), conversationConfig, logger),
    notificationEvents(notificationContext(notificationDb, notificationConfig, logger, redis), notificationConfig, logger),
  ];
  const relays = processors.map((outbox) => outbox.startRelay({ pollMs: workerVars.OUTBOX_POLL_MS.default! }));
  return {
    processors,
    async stop() {
      await Promise.all(relays.map((relay) => relay.stop()));
      for (const db of databases) await db.destroy();
      redis.disconnect();
    },
  };
}
