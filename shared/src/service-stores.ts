/**
 * What a service's API process opens before anything else: its schema's data source, a Redis
 * connection, the readiness checks on both, the producers of the queues it feeds, and one close
 * that stops them in order.
 */
import type { DataSource } from 'typeorm';
import { hasPendingMigrations } from './db.js';
import type { CascadeTarget } from './http/cascade-route.js';
import type { IdempotencyStore } from './http/idempotency.js';
import type { ReadinessCheck } from './http/readiness.js';
import { createIdempotencyStore, type AnswerSeal } from './idempotency/index.js';
import type { Logger } from './logger.js';
import type { definePurge, PurgeQueueName } from './purge/index.js';
import { createProducer, type Producer, type QueueName } from './queues/index.js';
import { createRedis, logRedisErrors, type RedisClient } from './redis.js';

export interface ServiceStores {
  db: DataSource;
  redis: RedisClient;
  /** Postgres, Redis, and no pending migration: what every service with a schema needs to be ready. */
  readiness: ReadinessCheck[];
  /** A producer for one of the service's queues, closed by `close`. */
  producer<Q extends QueueName>(queue: Q): Producer<Q>;
  /** The service's Idempotency-Key records, in its own schema. */
  idempotencyKeys(options: { ttlHours: number; seal?: AnswerSeal }): IdempotencyStore;
  /** The deletion cascade as the service's /internal/cascade route applies it: marks its rows and queues their purge. */
  receiveCascade(
    purge: ReturnType<typeof definePurge>,
    queue: PurgeQueueName,
  ): (applicationId: string, target: CascadeTarget, requestId: string) => Promise<void>;
  /** Closes the producers, then Redis, then the pool last: a request still finishing may hold a transaction open around a queue's add. */
  close(): Promise<void>;
}

export async function openServiceStores(options: {
  dataSource: DataSource;
  config: { REDIS_URL: string; REDIS_PREFIX: string };
  logger: Logger;
}): Promise<ServiceStores> {
  const { dataSource: db, config } = options;
  await db.initialize();
  // Few retries: while Redis is away, what uses this connection fails fast instead of stalling requests.
  const redis = logRedisErrors(createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 }), options.logger);
  const producers: { close(): Promise<void> }[] = [];
  const producer = <Q extends QueueName>(queue: Q) => {
    const created = createProducer(queue, { redisUrl: config.REDIS_URL, prefix: config.REDIS_PREFIX });
    producers.push(created);
    return created;
  };
  return {
    db,
    redis,
    readiness: [
      { name: 'postgres', check: () => db.query('SELECT 1') },
      { name: 'redis', check: () => redis.ping() },
      {
        name: 'migrations',
        check: async () => {
          if (await hasPendingMigrations(db)) throw new Error('migrations pending');
        },
      },
    ],
    producer,
    idempotencyKeys: ({ ttlHours, seal }) => createIdempotencyStore(db, { schema: (db.options as { schema: string }).schema, ttlHours, seal }),
    receiveCascade(purge, queue) {
      const purgeQueue = producer(queue);
      return (applicationId, target, requestId) => purge.applyCascade({ db, purgeQueue }, applicationId, target, requestId);
    },
    async close() {
      for (const opened of producers) await opened.close();
      redis.disconnect();
      await db.destroy();
    },
  };
}
