/**
 * What the identity worker tells the other processes after its writes, over a Redis connection of
 * its own (closed at shutdown), as identity's API does: credential invalidations on the channel
 * the gateways follow, and directory changes (domain/directory-changes.ts). A failure is logged:
 * the credential caches then expire by their TTL.
 */
import { createRedis, invalidationChannel, logRedisErrors, type Logger } from '@collab/shared';
import type { IdentityContext } from '../domain/context.js';
import { directoryChanges } from '../domain/directory-changes.js';

export type WorkerNotices = Pick<IdentityContext, 'publishInvalidation' | 'directoryChanged'>;

export function workerNotices(
  config: { REDIS_URL: string; REDIS_PREFIX: string },
  onShutdown: (close: () => unknown) => void,
  logger: Logger,
): WorkerNotices {
  const redis = logRedisErrors(createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 }), logger);
  onShutdown(() => redis.disconnect());
  const channel = invalidationChannel(config.REDIS_PREFIX);
  return {
    async publishInvalidation(message) {
      try {
        await redis.publish(channel, JSON.stringify(message));
      } catch (error) {
        logger.warn({ err: (error as Error).message, message }, 'cache invalidation not published');
      }
    },
    directoryChanged: directoryChanges(redis, config.REDIS_PREFIX, logger),
  };
}
