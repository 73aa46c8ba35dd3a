/**
 * The migrations are the schema: after applying them, TypeORM must find nothing to change between
 * the entities and the database (so a forgotten migration fails CI), and every migration's `down`
 * must undo it.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateServiceSchema } from '@collab/shared/storage';
import { migrateAll, SERVICE_DATA_SOURCES } from '../support/system.js';

const databaseName = `collab_test_drift_${randomBytes(4).toString('hex')}`;
const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
url.pathname = `/${databaseName}`;
const databaseUrl = url.toString();

const services = Object.entries(SERVICE_DATA_SOURCES);

afterAll(async () => {
  const admin = new pg.Client({ connectionString: databaseUrl.replace(`/${databaseName}`, '/postgres') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
  await admin.end();
});

describe('migrations', () => {
  it('leave nothing for TypeORM to generate from the entities', async () => {
    await migrateAll(databaseUrl);
    for (const [schema, create] of services) {
      const db = create(databaseUrl, 2);
      await db.initialize();
      try {
        const pending = await db.driver.createSchemaBuilder().log();
        expect(pending.upQueries.map((query) => query.query), `${schema} entities differ from its migrations`).toEqual([]);
      } finally {
        await db.destroy();
      }
    }
  });

  it('can be reverted with down and applied again', async () => {
    for (const [schema, create] of services) {
      const db = create(databaseUrl, 2);
      await db.initialize();
      try {
        while ((await db.query(`SELECT count(*)::int AS n FROM "${schema}".migrations`))[0].n > 0) await db.undoLastMigration();
        const tables = await db.query(
          `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name <> 'migrations'`,
          [schema],
        );
        expect(tables, `${schema} tables left after reverting every migration`).toEqual([]);
        await migrateServiceSchema(db, schema);
        expect(await db.showMigrations()).toBe(false);
      } finally {
        await db.destroy();
      }
    }
  });
});
