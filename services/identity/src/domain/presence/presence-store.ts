/**
 * Ephemeral presence in Redis (decision 50): one hash per (application, group, user), a field per
 * exclusivity region holding `<expiry ms> <location JSON>`. Each update renews its own field's
 * expiry and the hash's TTL, so an entry lasts PRESENCE_TTL_SECONDS after its last update and the
 * whole hash goes when its newest entry expires. Keys hold internal ids, which are never reused:
 * a deleted user's or group's entries cannot be read again, and `forget` removes them at once.
 */
import { primaryNodes, type RedisClient } from '@collab/shared';

type Location = Record<string, string | number | boolean>;

/** Removes the region's entry only when it holds exactly this location (§1.3 `absent`). */
const REMOVE_IF_AT = `
local value = redis.call('HGET', KEYS[1], ARGV[1])
if value and string.sub(value, string.find(value, ' ') + 1) == ARGV[2] then
  return redis.call('HDEL', KEYS[1], ARGV[1])
end
return 0`;

/** A location's canonical JSON: keys sorted, so equal locations have equal text. */
export function locationJson(location: Location): string {
  return JSON.stringify(Object.fromEntries(Object.keys(location).sort().map((key) => [key, location[key]])));
}

const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

export interface PresenceStore {
  setPresent(applicationId: string, groupId: string, userId: string, region: Location, location: Location): Promise<void>;
  setAbsent(applicationId: string, groupId: string, userId: string, region: Location, location: Location): Promise<void>;
  /** Current locations of the user in each group, in the order given. */
  locations(applicationId: string, userId: string, groupIds: readonly string[]): Promise<Location[][]>;
  /** Drops entries at once: of a user, of a group, or (neither) of the whole application. */
  forget(applicationId: string, of: { userId?: string; groupId?: string }): Promise<void>;
}

export function redisPresenceStore(redis: RedisClient, prefix: string, ttlSeconds: number): PresenceStore {
  const key = (applicationId: string, groupId: string, userId: string) => `${prefix}:presence:${applicationId}:${groupId}:${userId}`;
  return {
    async setPresent(applicationId, groupId, userId, region, location) {
      const ttlMs = ttlSeconds * 1000;
      await redis
        .multi()
        .hset(key(applicationId, groupId, userId), locationJson(region), `${Date.now() + ttlMs} ${locationJson(location)}`)
        .pexpire(key(applicationId, groupId, userId), ttlMs)
        .exec();
    },
    async setAbsent(applicationId, groupId, userId, region, location) {
      await redis.eval(REMOVE_IF_AT, 1, key(applicationId, groupId, userId), locationJson(region), locationJson(location));
    },
    async locations(applicationId, userId, groupIds) {
      const now = Date.now();
      const hashes = await Promise.all(groupIds.map((groupId) => redis.hgetall(key(applicationId, groupId, userId))));
      return hashes.map((hash) =>
        Object.values(hash)
          .map((value) => {
            const space = value.indexOf(' ');
            return { expiresAt: Number(value.slice(0, space)), text: value.slice(space + 1) };
          })
          .filter((entry) => entry.expiresAt > now)
          .map((entry) => JSON.parse(entry.text) as Location),
      );
    },
    async forget(applicationId, of) {
      const pattern = `${escapeGlob(prefix)}:presence:${applicationId}:${of.groupId ?? '*'}:${of.userId ?? '*'}`;
      for (const node of primaryNodes(redis)) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
          cursor = next;
          // One key per command: in a cluster the keys of one scan may lie in different slots.
          await Promise.all(keys.map((found) => node.del(found)));
        } while (cursor !== '0');
      }
    },
  };
}
