/** Removing what a test system left in the shared PostgreSQL and Redis. */
import { Cluster, createRedis, primaryNodes } from '../redis.js';
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

/**
 * Deletes every key of a Redis prefix (BullMQ's kept jobs and events of one test system), on
 * every primary of a cluster, one key per command (a cluster refuses a DEL of keys in several
 * slots), pipelined.
 */
export async function deleteRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = createRedis(redisUrl);
  try {
    if (redis instanceof Cluster && redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    for (const node of primaryNodes(redis)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length > 0) {
          const pipeline = node.pipeline();
          for (const key of keys) pipeline.del(key);
          await pipeline.exec();
        }
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
