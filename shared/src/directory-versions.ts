/**
 * The version of each application's directory (its users, groups and memberships), kept in Redis
 * so that a service may answer a check from what identity told it a moment ago while nothing in the
 * directory has changed since.
 *
 * The rule that makes that safe: identity gives an application's directory a new version after a
 * change has committed and before it answers the request that made it (`changed`), and a reader
 * takes the version before it asks identity and files the answer under that version (`current`).
 * An answer filed under the version of the moment was therefore asked after every change that has
 * answered, so a removed member is refused as soon as the removal has answered.
 *
 * A version is a random string, never a counter: when Redis loses the key (a restart without
 * persistence, an eviction) the next reader writes a new random one, which no earlier answer was
 * filed under.
 */
import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis.js';

export class DirectoryVersions {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private key(applicationId: string): string {
    return `${this.prefix}:directory-version:${applicationId}`;
  }

  /** The application's directory version now; a new one when Redis holds none. */
  async current(applicationId: string): Promise<string> {
    const key = this.key(applicationId);
    const version = await this.redis.get(key);
    if (version !== null) return version;
    // Whoever writes first wins; both readers then file under the one stored.
    await this.redis.set(key, randomUUID(), 'NX');
    return (await this.redis.get(key)) ?? randomUUID();
  }

  /**
   * Calls `listener` whenever the connection the versions are read over is lost: a version
   * identity wrote meanwhile may have been lost with it, so answers filed earlier must go.
   */
  onConnectionLost(listener: () => void): void {
    this.redis.on('close', listener);
  }

  /** Called once a change of the application's directory has committed, before it is answered. */
  async changed(applicationId: string): Promise<void> {
    await this.redis.set(this.key(applicationId), randomUUID());
  }
}
