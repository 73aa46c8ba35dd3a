/**
 * Presence storage. Durable presence: rows of identity.durable_presence. Ephemeral presence: one
 * Redis hash per (application, group), a field per (user, exclusivity region) holding the
 * location and its expiry; the hash itself expires with its latest update. Every key carries the
 * application as its cluster hash tag, so an application's presence is found under one pattern.
 */
import { rows, type FlatJson, type Queryable, type RedisClient } from '@collab/shared';
import { durablePresenceTable, groupsTable, usersTable } from './tables.js';

/** A location as JSON with sorted keys: equal locations, equal text. */
export function locationKey(location: FlatJson): string {
  return JSON.stringify(Object.fromEntries(Object.entries(location).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

/** A user's durable record, read with the user's external id. */
export interface DurableRecord {
  userId: string;
  externalUserId: string;
  location: FlatJson;
  lastPresentAt: Date;
}

export const durablePresenceRepository = {
  async upsert(db: Queryable, applicationId: string, groupId: string, userId: string, location: FlatJson): Promise<void> {
    await db.query(
      `INSERT INTO identity.durable_presence (application_id, group_id, user_id, location_key, location, last_present_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, now())
       ON CONFLICT (group_id, user_id, location_key) DO UPDATE SET last_present_at = now()`,
      [applicationId, groupId, userId, locationKey(location), JSON.stringify(location)],
    );
  },

  /**
   * Each user's latest durable record in the groups given that matches the location (exactly, or
   * containing it); users marked deleted are left out, as the original does.
   */
  async latest(
    db: Queryable,
    applicationId: string,
    groupIds: readonly string[],
    match: { location: FlatJson; partial: boolean },
    userId?: string,
  ): Promise<DurableRecord[]> {
    if (groupIds.length === 0) return [];
    return rows<DurableRecord>(
      db,
      `SELECT DISTINCT ON (dp.user_id) ${durablePresenceTable.pick('userId')}, ${usersTable.as('externalId', 'externalUserId')},
              ${durablePresenceTable.pick('location', 'lastPresentAt')}
       FROM identity.durable_presence dp JOIN identity.users u ON u.internal_id = dp.user_id
       WHERE dp.application_id = $1 AND dp.group_id = ANY($2::bigint[]) AND u.status <> 'deleted'
         AND (CASE WHEN $4 THEN dp.location @> $3::jsonb ELSE dp.location_key = $5 END)
         AND ($6::bigint IS NULL OR dp.user_id = $6::bigint)
       ORDER BY dp.user_id, dp.last_present_at DESC`,
      [applicationId, groupIds, JSON.stringify(match.location), match.partial, locationKey(match.location), userId ?? null],
    );
  },
};

/** One ephemeral presence: where the user is, inside one exclusivity region. */
export interface EphemeralEntry {
  userId: string;
  region: string;
  location: string;
}

interface StoredEntry {
  location: string;
  expiresAt: number;
}

const SEPARATOR = '\n';

export function ephemeralPresenceStore(redis: RedisClient, prefix: string, ttlSeconds: number) {
  const applicationPattern = (applicationId: string) => `${prefix}:presence:{${applicationId}}:*`;
  const groupKey = (applicationId: string, groupId: string) => `${prefix}:presence:{${applicationId}}:${groupId}`;
  const field = (userId: string, region: string) => `${userId}${SEPARATOR}${region}`;

  async function keysOf(applicationId: string): Promise<string[]> {
    const keys: string[] = [];
    // On a cluster the hash tag puts every key of the application on one node; SCAN reaches it there.
    const nodes = 'nodes' in redis ? redis.nodes('master') : [redis];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', applicationPattern(applicationId), 'COUNT', 500);
        keys.push(...found);
        cursor = next;
      } while (cursor !== '0');
    }
    return keys;
  }

  return {
    ttlSeconds,

    /** Present at `location` within `region`, replacing what the user had there; renews the expiry. */
    async set(applicationId: string, groupId: string, userId: string, region: string, location: string): Promise<void> {
      const key = groupKey(applicationId, groupId);
      const value: StoredEntry = { location, expiresAt: Date.now() + ttlSeconds * 1000 };
      await redis.multi().hset(key, field(userId, region), JSON.stringify(value)).expire(key, ttlSeconds).exec();
    },

    /** Absent from `location`: removes the user's entry of `region` only when it holds that location. */
    async clear(applicationId: string, groupId: string, userId: string, region: string, location: string): Promise<void> {
      const key = groupKey(applicationId, groupId);
      const stored = await redis.hget(key, field(userId, region));
      if (stored !== null && (JSON.parse(stored) as StoredEntry).location === location) await redis.hdel(key, field(userId, region));
    },

    /** The unexpired entries of each group, in the groups' order. */
    async list(applicationId: string, groupIds: readonly string[]): Promise<Map<string, EphemeralEntry[]>> {
      const now = Date.now();
      const result = new Map<string, EphemeralEntry[]>();
      for (const groupId of groupIds) {
        const hash = await redis.hgetall(groupKey(applicationId, groupId));
        const entries: EphemeralEntry[] = [];
        for (const [name, raw] of Object.entries(hash)) {
          const stored = JSON.parse(raw) as StoredEntry;
          if (stored.expiresAt <= now) continue;
          const at = name.indexOf(SEPARATOR);
          entries.push({ userId: name.slice(0, at), region: name.slice(at + 1), location: stored.location });
        }
        result.set(groupId, entries);
      }
      return result;
    },

    async forgetGroup(applicationId: string, groupId: string): Promise<void> {
      await redis.del(groupKey(applicationId, groupId));
    },

    async forgetUser(applicationId: string, userId: string): Promise<void> {
      for (const key of await keysOf(applicationId)) {
        const names = (await redis.hkeys(key)).filter((name) => name.startsWith(`${userId}${SEPARATOR}`));
        if (names.length > 0) await redis.hdel(key, ...names);
      }
    },

    async forgetApplication(applicationId: string): Promise<void> {
      for (const key of await keysOf(applicationId)) await redis.del(key);
    },
  };
}

export type EphemeralPresenceStore = ReturnType<typeof ephemeralPresenceStore>;

/** Memberships as presence reads them: who may see whom. */
export const presenceScopeRepository = {
  async isMember(db: Queryable, applicationId: string, groupId: string, userId: string): Promise<boolean> {
    const found = await rows<unknown>(
      db,
      `SELECT 1 FROM identity.group_members WHERE application_id = $1 AND group_id = $2 AND user_id = $3`,
      [applicationId, groupId, userId],
    );
    return found.length > 0;
  },

  /** The user's groups (internal and external ids), oldest membership first. */
  async groupsOf(db: Queryable, applicationId: string, userId: string): Promise<{ internalId: string; externalId: string }[]> {
    return rows<{ internalId: string; externalId: string }>(
      db,
      `SELECT ${groupsTable.pick('internalId', 'externalId')}
       FROM identity.group_members m JOIN identity.groups g ON g.internal_id = m.group_id
       WHERE m.application_id = $1 AND m.user_id = $2 ORDER BY m.added_seq`,
      [applicationId, userId],
    );
  },

  /** Internal ids of the application's groups named. */
  async internalIds(db: Queryable, applicationId: string, externalIds: readonly string[]): Promise<string[]> {
    if (externalIds.length === 0) return [];
    const found = await rows<{ internalId: string }>(
      db,
      `SELECT ${groupsTable.pick('internalId')} FROM identity.groups g WHERE g.application_id = $1 AND g.external_id = ANY($2::text[])`,
      [applicationId, externalIds],
    );
    return found.map((row) => row.internalId);
  },

  /** External ids of the members of the groups, by internal id. */
  async memberIds(db: Queryable, applicationId: string, groupIds: readonly string[]): Promise<Map<string, string>> {
    if (groupIds.length === 0) return new Map();
    const found = await rows<{ internalId: string; externalId: string }>(
      db,
      `SELECT DISTINCT ${usersTable.pick('internalId', 'externalId')}
       FROM identity.group_members m JOIN identity.users u ON u.internal_id = m.user_id
       WHERE m.application_id = $1 AND m.group_id = ANY($2::bigint[])`,
      [applicationId, groupIds],
    );
    return new Map(found.map((row) => [row.internalId, row.externalId]));
  },
};
