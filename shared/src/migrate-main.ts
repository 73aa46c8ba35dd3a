/** The body of every service's migrate entry point: create the database if needed, then migrate. */
import type { DataSource } from 'typeorm';
import { commonVars, loadConfig } from './config.js';
import { ensureDatabase, migrateServiceSchema } from './db.js';
import { createLogger } from './logger.js';
import { runMain } from './lifecycle.js';

export function runMigrateMain(options: {
  service: string;
  schema: string;
  createDataSource: (url: string, poolSize: number) => DataSource;
}): void {
  runMain(`${options.service}-migrate`, async () => {
    const { DATABASE_URL, LOG_LEVEL } = loadConfig({ DATABASE_URL: commonVars.DATABASE_URL, LOG_LEVEL: commonVars.LOG_LEVEL });
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
