/**
 * PostgreSQL for every service: one database, one schema per service, TypeORM migrations
 * (never `synchronize` outside tests).
 */
import pg from 'pg';
import { DataSource, type EntitySchema, type MixedList } from 'typeorm';

export interface ServiceDataSourceOptions {
  url: string;
  /** The service's own Postgres schema; nothing else may touch it. */
  schema: string;
  entities: MixedList<EntitySchema | Function>;
  migrations: MixedList<Function>;
  poolSize?: number;
  applicationName: string;
}

export function createServiceDataSource(options: ServiceDataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    logging: false,
    applicationName: options.applicationName,
    extra: { max: options.poolSize ?? 10, connectionTimeoutMillis: 5000 },
  });
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`).catch((error: { code?: string }) => {
        // Another process created it meanwhile.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      });
    }
  } finally {
    await client.end();
  }
}

/**
 * Applies pending migrations of one service under an advisory lock, so that several replicas
 * starting together migrate once.
 */
export async function migrateServiceSchema(dataSource: DataSource, schema: string): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [`migrate:${schema}`]);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [`migrate:${schema}`]).catch(() => undefined);
    await runner.release();
  }
}

/** True while a migration of this service has not been applied (readiness fails meanwhile). */
export async function hasPendingMigrations(dataSource: DataSource): Promise<boolean> {
  try {
    return await dataSource.showMigrations();
  } catch (error) {
    // A database never migrated has no schema (nor migrations table) yet: everything is pending.
    if ((error as { code?: string; driverError?: { code?: string } }).driverError?.code === '3F000') return true;
    if ((error as { code?: string }).code === '3F000') return true;
    throw error;
  }
}
