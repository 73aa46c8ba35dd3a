/** The identity worker's notices (domain/notices.ts), over a Redis connection of its own, closed at shutdown. */
import { createRedis, logRedisErrors, type Logger } from '@collab/shared';
import { identityNotices, type IdentityNotices } from '../domain/notices.js';

export function workerNotices(
  config: { REDIS_URL: string; REDIS_PREFIX: string },
  onShutdown: (close: () => unknown) => void,
  logger: Logger,
): IdentityNotices {
  const redis = logRedisErrors(createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 }), logger);
  onShutdown(() => redis.disconnect());
  return identityNotices(redis, config.REDIS_PREFIX, logger);
}
