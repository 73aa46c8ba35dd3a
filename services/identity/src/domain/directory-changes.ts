/**
 * Tells the services that reuse identity's answers (shared/src/directory-versions.ts) that an
 * application's users, groups or memberships changed: called once the change has committed and
 * before it is answered, by the API after every write request and by the worker after each batch
 * and import write.
 */
import { DirectoryVersions, type Logger, type RedisClient } from '@collab/shared';

export type DirectoryChanged = (applicationId: string) => Promise<void>;

/**
 * A failure is logged, not thrown: the write has committed and is answered. The readers drop what
 * they reused when their own Redis connection is lost, which is what keeps a Redis outage from
 * leaving them a version this one could not replace.
 */
export function directoryChanges(redis: RedisClient, prefix: string, logger: Logger): DirectoryChanged {
  const versions = new DirectoryVersions(redis, prefix);
  return async (applicationId) => {
    try {
      await versions.changed(applicationId);
    } catch (error) {
      logger.warn({ err: (error as Error).message, applicationId }, 'directory version not changed');
    }
  };
}
