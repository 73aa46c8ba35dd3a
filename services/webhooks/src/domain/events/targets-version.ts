/**
 * The webhook-targets version of an application (shared/src/application-versions.ts). The relays of
 * the other services reuse this service's answer to "does anyone receive this application's events
 * of this type?" while the version is unchanged. This service owns the version and writes a new one
 * whenever that answer may change: after each of its own writes, before it is answered, and when
 * identity says an application changed (its event URL and subscriptions live there).
 *
 * A failure is logged, not thrown: the write has committed and is answered, and a relay reuses an
 * answer for at most a minute (REUSED_ANSWER_MAX_AGE_MS).
 */
import { ApplicationVersions, type Logger, type RedisClient } from '@collab/shared';

export type TargetsChanged = (applicationId: string) => Promise<void>;

export function targetsVersion(redis: RedisClient, prefix: string, logger: Logger): TargetsChanged {
  const versions = new ApplicationVersions(redis, prefix);
  return async (applicationId) => {
    try {
      await versions.changed('webhook-targets', applicationId);
    } catch (error) {
      logger.warn({ err: (error as Error).message, applicationId }, 'webhook-targets version not changed');
    }
  };
}
