/**
 * What identity tells the other processes after its writes, over Redis: credential invalidations
 * on the channel the gateways and the webhooks service follow, and directory changes for the
 * services that reuse identity's answers (shared/src/application-versions.ts). The API and the worker
 * send both the same way, each over a connection of its own.
 *
 * A failure is logged, not thrown: the write has committed and is answered. The credential caches
 * then expire by their TTL; the readers of directory versions drop what they reused when their own
 * Redis connection is lost, which is what keeps an outage from leaving them a version identity
 * could not replace.
 */
import { ApplicationVersions, invalidationChannel, type InvalidationMessage, type Logger, type RedisClient } from '@collab/shared';

export interface IdentityNotices {
  publishInvalidation(message: InvalidationMessage): Promise<void>;
  /** After a committed change of an application's users, groups or memberships, before it is answered. */
  directoryChanged(applicationId: string): Promise<void>;
}

export function identityNotices(redis: RedisClient, prefix: string, logger: Logger): IdentityNotices {
  const channel = invalidationChannel(prefix);
  const versions = new ApplicationVersions(redis, prefix);
  return {
    async publishInvalidation(message) {
      try {
        await redis.publish(channel, JSON.stringify(message));
      } catch (error) {
        logger.warn({ err: (error as Error).message, message }, 'cache invalidation not published');
      }
    },
    async directoryChanged(applicationId) {
      try {
        await versions.changed('directory', applicationId);
      } catch (error) {
        logger.warn({ err: (error as Error).message, applicationId }, 'directory version not changed');
      }
    },
  };
}
