/**
 * PostgreSQL for every service: one schema per service, in one database or each in its own
 * (`<SERVICE>_DATABASE_URL`), TypeORM migrations (never `synchronize` outside tests).
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { DataSource, type EntityManager, type EntitySchema, type MixedList, type QueryRunner } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel.js';
import { processSettings } from './config.js';
import { unavailable } from './errors.js';
import type { Queryable } from './sql.js';

export interface ServiceDataSourceOptions {
  url: string;
  /** The service's own Postgres schema; nothing else may touch it. */
  schema: string;
  entities: MixedList<EntitySchema | Function>;
  migrations: MixedList<Function>;
  poolSize?: number;
  applicationName: string;
}

/** SQLSTATEs of a connection lost or refused (class 08, server shutting down, too many connections). */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** What node-postgres says, without a code, when a connection dies or none frees up in time. */
const UNAVAILABLE_MESSAGE = /Connection terminated|timeout exceeded when trying to connect|not queryable/;

/**
 * True when Postgres could not be reached or dropped the connection (a restart, a failover,
 * `pg_terminate_backend`): worth trying again, unlike a statement that failed.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause = ((error as { driverError?: unknown } | null)?.driverError ?? error) as { code?: unknown; message?: unknown } | null;
  if (!cause) return false;
  if (typeof cause.code === 'string' && (UNAVAILABLE_SQLSTATE.test(cause.code) || UNAVAILABLE_SOCKET_CODES.has(cause.code))) return true;
  return typeof cause.message === 'string' && UNAVAILABLE_MESSAGE.test(cause.message);
}

function unavailableOr(error: unknown): unknown {
  if (!isDatabaseUnavailable(error)) return error;
  return unavailable('The database is unavailable. Try again.');
}

/** Distinct statements one connection keeps prepared; past it, new texts run unnamed (texts built per call cannot pile up). */
const PREPARED_PER_CONNECTION = 500;
/** Names of the statement texts seen, so that a text is hashed once; past this many, names are computed per call. */
const NAMED_TEXTS_KEPT = 5000;
const statementNames = new Map<string, string>();

function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `s_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    if (statementNames.size < NAMED_TEXTS_KEPT) statementNames.set(text, name);
  }
  return name;
}

/**
 * The connections of every pool.
 *
 * Each parameterised statement is a named prepared statement, named after its text: PostgreSQL
 * parses and plans it at its first run on a connection and reuses the plan after, where an unnamed
 * statement is parsed and planned on every run (planning was three quarters of PostgreSQL's CPU
 * for GET user's statement: 148 → 41 µs). Plans follow PostgreSQL's own choice between a plan per
 * run and a generic one, made on cost estimates; DDL invalidates them. DB_PREPARED_STATEMENTS=off
 * runs every statement unnamed, for a pooler between the service and PostgreSQL that cannot keep
 * prepared statements (PgBouncer before 1.21 in transaction mode).
 *
 * A connection killed while checked out (pg_terminate_backend, a failover) can emit a second
 * 'error' after TypeORM has released it and removed its own listener; with none left that would
 * crash the process. The query using it has already failed (503), so there is nothing more to do.
 *
 * Exported so that the bench's baselines talk to PostgreSQL as the services do.
 */
export class ServiceClient extends pg.Client {
  private readonly prepared = new Set<string>();
  private readonly prepares = processSettings().DB_PREPARED_STATEMENTS;

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }

  // pg's query has a dozen overloads; TypeORM calls the (text, values) one, which is the one named here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const [text, values, callback] = args;
    if (this.prepares && typeof text === 'string' && Array.isArray(values)) {
      const name = statementName(text);
      if (this.prepared.has(name) || this.prepared.size < PREPARED_PER_CONNECTION) {
        this.prepared.add(name);
        return super.query({ name, text, values }, callback);
      }
    }
    return super.query(...(args as Parameters<pg.Client['query']>));
  }
}

/**
 * A data source whose queries and transactions that lose their connection fail with 503
 * `service_unavailable` (retryable: requests answer it, jobs are retried) instead of an opaque
 * 500. A transaction cut off never commits half of its statements, so trying again is safe.
 */
class ServiceDataSource extends DataSource {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- TypeORM's own signature
  override async query<T = any>(query: string, parameters?: unknown[], queryRunner?: QueryRunner): Promise<T> {
    try {
      return await super.query<T>(query, parameters, queryRunner);
    } catch (error) {
      throw unavailableOr(error);
    }
  }

  override transaction<T>(run: (manager: EntityManager) => Promise<T>): Promise<T>;
  override transaction<T>(isolationLevel: IsolationLevel, run: (manager: EntityManager) => Promise<T>): Promise<T>;
  override async transaction<T>(
    first: IsolationLevel | ((manager: EntityManager) => Promise<T>),
    second?: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    try {
      return await (typeof first === 'function' ? super.transaction(first) : super.transaction(first, second!));
    } catch (error) {
      // TypeORM releases a transaction's connection when it dies between two statements; the
      // next statement then fails with this instead of the connection's error.
      if ((error as Error).name === 'QueryRunnerProviderAlreadyReleasedError') throw unavailableOr(new Error('Connection terminated'));
      throw unavailableOr(error);
    }
  }
}

export function createServiceDataSource(options: ServiceDataSourceOptions): DataSource {
  return new ServiceDataSource({
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    synchronize: false,
    logging: false,
    applicationName: options.applicationName,
    extra: { max: options.poolSize ?? 10, connectionTimeoutMillis: 5000, Client: ServiceClient },
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

/**
 * Orders marking rows for purge before purging them, per application: a transaction that marks
 * (and queues the purge job before it commits) holds the shared lock; the job takes the lock
 * exclusively before it reads what is marked, so it waits for that commit instead of finding
 * nothing and leaving the rows marked. Markings never wait for each other.
 */
export const purgeOrder = {
  whileMarking: (tx: Queryable, schema: string, applicationId: string) =>
    tx.query('SELECT pg_advisory_xact_lock_shared(hashtext($1))', [`purge:${schema}:${applicationId}`]),
  afterMarkings: (db: Queryable, schema: string, applicationId: string) =>
    db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`purge:${schema}:${applicationId}`]),
};
