/** The body of every service's migrate entry point: create the database if needed, then migrate. */
import type { DataSource } from 'typeorm';
import { commonVars, ConfigError, loadConfig, SERVICE_DATABASE_VARS, serviceDatabaseVar, withServiceDatabase, type DatabaseService } from './config.js';
import { ensureDatabase, migrateServiceSchema } from './db.js';
import { createLogger } from './logger.js';
import { runMain } from './lifecycle.js';

/** What a service's migrate entry point reads: DATABASE_URL, or the service's own database. */
export function migrateConfigSpec(service: DatabaseService) {
  return {
    DATABASE_URL: commonVars.DATABASE_URL,
    [SERVICE_DATABASE_VARS[service]]: serviceDatabaseVar(service),
    LOG_LEVEL: commonVars.LOG_LEVEL,
  };
}

/** Connection failures meaning that no PostgreSQL answers where the URL points (not a refused login). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

export function runMigrateMain(options: {
  service: DatabaseService;
  schema: string;
  createDataSource: (url: string, poolSize: number) => DataSource;
}): void {
  runMain(`${options.service}-migrate`, async () => {
    const config = loadConfig(migrateConfigSpec(options.service));
    const { DATABASE_URL, LOG_LEVEL } = withServiceDatabase(config, options.service);
    const logger = createLogger(`${options.service}-migrate`, LOG_LEVEL);
    // The first connection of a first start: say where it looked and which setting moves it.
    await ensureDatabase(DATABASE_URL).catch((error: NodeJS.ErrnoException) => {
      if (!UNREACHABLE.has(error.code ?? '')) throw error;
      const { hostname, port } = new URL(DATABASE_URL);
      const setting = config[SERVICE_DATABASE_VARS[options.service]] ? SERVICE_DATABASE_VARS[options.service] : 'DATABASE_URL';
      throw new ConfigError([`no PostgreSQL answers at ${hostname}:${port || 5432} (${error.message}): start it there, or set ${setting} to yours`]);
    });
    // Two connections: one holds the advisory lock while the other runs the migrations.
    const db = options.createDataSource(DATABASE_URL, 2);
    await db.initialize();
    try {
      const applied = await migrateServiceSchema(db, options.schema);
      logger.info({ applied }, applied.length > 0 ? 'migrations applied' : 'schema up to date');
    } finally {
      await db.destroy();
    }
  });
}
