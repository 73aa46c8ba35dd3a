import { Redis, type RedisOptions } from 'ioredis';

export { Redis } from 'ioredis';

/**
 * A Redis connection. `maxRetriesPerRequest: null` is what BullMQ workers need; HTTP paths pass
 * a small number so that a Redis outage fails fast instead of queueing commands forever.
 */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { lazyConnect: false, enableOfflineQueue: true, ...options });
}
