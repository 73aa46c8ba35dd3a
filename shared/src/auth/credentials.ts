/**
 * Application secrets, customer secrets and access-token sessions, fetched from identity and
 * cached. Identity publishes an invalidation whenever one changes, so every gateway replica
 * drops its copy at once; the TTL bounds staleness if a message is missed. Redis drops the
 * invalidations published while the subscriber is disconnected, so then nothing is cached: the
 * caches are emptied when it disconnects and fill again only once it has subscribed again.
 */
import { identityInternal } from '../contracts/identity.js';
import { ApiError } from '../errors.js';
import type { InternalClient } from '../http/internal-client.js';
import type { Logger } from '../logger.js';
import { invalidationChannel, type InvalidationMessage } from '../pubsub.js';
import type { RedisClient } from '../redis.js';

interface Entry<T> {
  value: T;
  expiresAt: number;
}

class TtlCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  /**
   * Bumped by every invalidation. A load that was in flight when one arrived may have read the
   * old state, so its result answers that one request but is not stored (else a deleted
   * application's secret or a revoked session could live on for a whole TTL).
   */
  private generation = 0;
  /** False while invalidations cannot arrive: nothing is stored then. */
  private storing = true;
  constructor(private readonly ttlMs: number) {}

  async get(key: string, load: () => Promise<T | null>): Promise<T | null> {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > Date.now()) return hit.value;
    const generation = this.generation;
    const value = await load();
    // Unknown ids are not cached: an id may be created right after.
    if (value === null) this.entries.delete(key);
    else if (this.storing && generation === this.generation) this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
    return value;
  }

  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  /** Drops every entry, and stores new ones from now on only when `storing`. */
  reset(storing: boolean): void {
    this.generation++;
    this.entries.clear();
    this.storing = storing;
  }

  deleteWhere(predicate: (value: T) => boolean): void {
    this.generation++;
    for (const [key, entry] of this.entries) if (predicate(entry.value)) this.entries.delete(key);
  }
}

export type ApplicationCredentials = ReturnType<typeof identityInternal.applicationCredentials.response.parse>;
export type CustomerCredentials = ReturnType<typeof identityInternal.customerCredentials.response.parse>;
export type Session = ReturnType<typeof identityInternal.session.response.parse>;

export class CredentialStore {
  private readonly applications: TtlCache<ApplicationCredentials>;
  private readonly customers: TtlCache<CustomerCredentials>;
  private readonly sessions: TtlCache<Session>;

  constructor(
    private readonly identity: InternalClient,
    ttlMs: number,
  ) {
    this.applications = new TtlCache(ttlMs);
    this.customers = new TtlCache(ttlMs);
    this.sessions = new TtlCache(Math.min(ttlMs, 30_000));
  }

  application(id: string, requestId: string) {
    return this.applications.get(id, () =>
      this.fetch(identityInternal.applicationCredentials, identityInternal.applicationCredentials.path(id), requestId),
    );
  }

  customer(id: string, requestId: string) {
    return this.customers.get(id, () =>
      this.fetch(identityInternal.customerCredentials, identityInternal.customerCredentials.path(id), requestId),
    );
  }

  session(id: string, requestId: string) {
    return this.sessions.get(id, () => this.fetch(identityInternal.session, identityInternal.session.path(id), requestId));
  }

  invalidate(message: InvalidationMessage): void {
    // Entries are keyed by lower-case UUIDs (as tokens are normalised); so is every comparison.
    const id = String(message.id).toLowerCase();
    switch (message.kind) {
      case 'application':
        this.applications.delete(id);
        break;
      case 'customer':
        this.customers.delete(id);
        break;
      case 'session':
        this.sessions.delete(id);
        break;
      case 'sessions-of-application':
        this.sessions.deleteWhere((session) => session.applicationId.toLowerCase() === id);
        break;
    }
  }

  /**
   * Follows identity's invalidations on a dedicated subscriber connection. Caches only while
   * subscribed: from the subscription's confirmation (every message published after it arrives)
   * until the connection closes (messages published meanwhile are lost). `onInvalidated` runs after
   * each invalidation is applied.
   */
  async subscribe(subscriber: RedisClient, prefix: string, logger: Logger, onInvalidated?: (message: InvalidationMessage) => void): Promise<void> {
    const channel = invalidationChannel(prefix);
    this.resetCaches(false);
    subscriber.on('message', (from, text) => {
      if (from !== channel) return;
      let message: InvalidationMessage;
      try {
        message = JSON.parse(text) as InvalidationMessage;
        this.invalidate(message);
      } catch {
        logger.warn({ text }, 'ignored malformed invalidation message');
        return;
      }
      onInvalidated?.(message);
    });
    let following = false;
    const follow = async () => {
      await subscriber.subscribe(channel);
      // Closed again meanwhile: the next 'ready' subscribes again.
      if (subscriber.status !== 'ready') return;
      this.resetCaches(true);
      if (!following) logger.info('following credential invalidations; caching credentials');
      following = true;
    };
    subscriber.on('close', () => {
      if (following) logger.warn('credential invalidations not followed while Redis is away; not caching credentials');
      following = false;
      this.resetCaches(false);
    });
    // After a reconnect: subscribe (again) and start caching afresh once Redis confirms it.
    subscriber.on('ready', () => void follow().catch(() => undefined));
    await follow();
  }

  private resetCaches(storing: boolean): void {
    for (const cache of [this.applications, this.customers, this.sessions]) cache.reset(storing);
  }

  private async fetch<T>(
    contract: { response: { parse(value: unknown): T } },
    path: string,
    requestId: string,
  ): Promise<T | null> {
    try {
      return contract.response.parse(await this.identity.call('GET', path, { requestId }));
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') return null;
      if (error instanceof ApiError && error.status >= 500) throw error;
      // A malformed answer from identity is a broken dependency, not the client's fault.
      throw new ApiError('bad_gateway', 'The identity service answered with an invalid response.');
    }
  }
}
