import type { DataSource } from 'typeorm';
import { hasPendingMigrations } from './db.js';
import type { ReadinessCheck } from './http/readiness.js';
import type { RedisClient } from './redis.js';

/** What every service with a schema needs to be ready: Postgres, Redis, and no pending migration. */
export function storageReadiness(db: DataSource, redis: RedisClient): ReadinessCheck[] {
  return [
    { name: 'postgres', check: () => db.query('SELECT 1') },
    { name: 'redis', check: () => redis.ping() },
    {
      name: 'migrations',
      check: async () => {
        if (await hasPendingMigrations(db)) throw new Error('migrations pending');
      },
    },
  ];
}
