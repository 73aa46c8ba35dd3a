/**
 * Versions of what a service answers about an application, kept in Redis, so that another service
 * may reuse an answer it was given a moment ago while nothing the answer depends on has changed
 * (reused-answers.ts). Each subject has one owner, the only service that writes its versions:
 * - `directory`: the application's users, groups and memberships; owned by identity.
 * - `webhook-targets`: where the application's events go (its registered webhooks, and its own
 *   event URL and subscriptions as identity last told); owned by the webhooks service.
 *
 * The rule that makes reuse safe: the owner gives the subject a new version after a change has
 * committed and before it answers the request that made it (`changed`), and a reader takes the
 * version before it asks the owner and files the answer under that version (`current`). An answer
 * filed under the version of the moment was therefore asked after every change that has answered.
 *
 * A version is a random string, never a counter: when Redis loses the key (a restart without
 * persistence, an eviction) the next reader writes a new random one, which no earlier answer was
 * filed under.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis.js';

export type VersionedSubject = 'directory' | 'webhook-targets';

export class ApplicationVersions {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(subject: VersionedSubject, applicationId: string): string {
    return `${this.prefix}:${subject}-version:${applicationId}`;
  }

  /** The version of the application's subject now; a new one when Redis holds none. */
  async current(subject: VersionedSubject, applicationId: string): Promise<string> {
    const key = this.key(subject, applicationId);
    const version = await this.redis.get(key);
    if (version !== null) return version;
    // Whoever writes first wins; both readers then file under the one stored.
    await this.redis.set(key, randomUUID(), 'NX');
    return (await this.redis.get(key)) ?? randomUUID();
  }

  /**
   * Calls `listener` whenever the connection the versions are read over is lost: a version the
   * owner wrote meanwhile may have been lost with it, so answers filed earlier must go.
   */
  onConnectionLost(listener: () => void): void {
    this.redis.on('close', listener);
  }

  /** Called by the subject's owner once a change has committed, before it is answered. */
  async changed(subject: VersionedSubject, applicationId: string): Promise<void> {
    await this.redis.set(this.key(subject, applicationId), randomUUID());
  }
}
