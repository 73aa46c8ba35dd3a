/** Removing what a test system left in the shared PostgreSQL and Redis. */
import { createRedis } from '@collab/shared';
import pg from 'pg';

export async function dropDatabase(anyDatabaseUrl: string, name: string): Promise<void> {
  const url = new URL(anyDatabaseUrl);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${name.replaceAll('"', '""')}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Deletes every key of a Redis prefix (BullMQ's kept jobs and events of one test system). */
export async function deleteRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = createRedis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
