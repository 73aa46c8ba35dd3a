/** The body of every service's migrate entry point: create the database if needed, then migrate. */
import type { DataSource } from 'typeorm';
import { commonVars, loadConfig, SERVICE_DATABASE_VARS, serviceDatabaseVar, withServiceDatabase, type DatabaseService } from './config.js';
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

export function runMigrateMain(options: {
  service: DatabaseService;
  schema: string;
  createDataSource: (url: string, poolSize: number) => DataSource;
}): void {
  runMain(`${options.service}-migrate`, async () => {
    const { DATABASE_URL, LOG_LEVEL } = withServiceDatabase(loadConfig(migrateConfigSpec(options.service)), options.service);
    const logger = createLogger(`${options.service}-migrate`, LOG_LEVEL);
    await ensureDatabase(DATABASE_URL);
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
