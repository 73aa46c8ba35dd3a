import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';
import { parseClusterUrl } from './redis-url.js';

export { Cluster, Redis } from 'ioredis';
export { parseClusterUrl, parseRedisUrl, type ClusterAddress } from './redis-url.js';

/** A connection to one Redis server or to a Redis Cluster: both take the same commands. */
export type RedisClient = Redis | Cluster;

/**
 * A Redis connection, to a cluster when the URL names one. `maxRetriesPerRequest: null` is what
 * BullMQ workers need; HTTP paths pass a small number so that a Redis outage fails fast instead
 * of queueing commands forever.
 */
export function createRedis(url: string, options: RedisOptions = {}): RedisClient {
  const redisOptions: RedisOptions = { lazyConnect: false, enableOfflineQueue: true, ...options };
  const cluster = parseClusterUrl(url);
  if (!cluster) return new Redis(url, redisOptions);
  return new Cluster(cluster.nodes, {
    lazyConnect: redisOptions.lazyConnect,
    enableOfflineQueue: redisOptions.enableOfflineQueue,
    redisOptions: {
      ...redisOptions,
      username: cluster.username,
      password: cluster.password,
      ...(cluster.tls ? { tls: {} } : {}),
    },
  });
}

/**
 * Logs a connection's errors (each failed reconnection while Redis is away) as warnings, and
 * returns the connection. Without a listener, ioredis prints every one of them to the console.
 */
export function logRedisErrors<T extends RedisClient>(connection: T, logger: Logger): T {
  connection.on('error', (error: Error) => logger.warn({ err: error.message }, 'redis connection error'));
  return connection;
}

/** The connections to every primary node: one for a single server, each master of a cluster. */
export function primaryNodes(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/**
 * The hash tag that keeps every key of one queue in one cluster slot (BullMQ's scripts touch
 * several keys of a queue at once, which a cluster only allows within one slot), while each queue
 * has its own tag, so that the queues spread over the cluster's nodes. Keys still start with
 * REDIS_PREFIX, so a system's keys are found and removed by that prefix.
 */
export function queuePrefix(prefix: string, queue: string): string {
  return `${prefix}:{${queue}}`;
}

/**
 * Logs an error when Redis may evict keys: with a `maxmemory-policy` other than `noeviction`, a
 * full Redis silently drops queued jobs and their locks instead of refusing writes. Managed
 * Redis services often refuse CONFIG GET: that is logged as a warning that the setting could not
 * be checked, and the process starts anyway.
 */
export async function checkRedisEviction(redis: RedisClient, logger: Logger): Promise<void> {
  try {
    // A cluster lists its nodes once it has read the slot map.
    if (redis instanceof Cluster && redis.status !== 'ready')
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the cluster was not ready within 10 s')), 10_000);
        redis.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    for (const node of primaryNodes(redis)) {
      const [, policy] = (await node.config('GET', 'maxmemory-policy')) as string[];
      if (policy === undefined) throw new Error('CONFIG GET maxmemory-policy returned nothing');
      if (policy !== 'noeviction')
        logger.error(
          { node: `${node.options.host}:${node.options.port}`, maxmemoryPolicy: policy },
          'Redis may evict keys (maxmemory-policy is not noeviction): queued jobs can be lost when it is full; set maxmemory-policy noeviction',
        );
    }
  } catch (error) {
    logger.warn({ err: (error as Error).message }, 'could not check that Redis never evicts keys (maxmemory-policy); make sure it is noeviction');
  }
}
