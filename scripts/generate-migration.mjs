// Development tool: writes a TypeORM migration for what a service's entities add to its schema.
//   npm run build && node scripts/generate-migration.mjs <service> <PascalCaseName>
// It applies the existing migrations to a scratch database, asks TypeORM for the difference to the
// entities, and writes services/<service>/src/migrations/<timestamp>-<name>.ts for review.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { root } from './processes.mjs';

const [service, name] = process.argv.slice(2);
if (!service || !/^[A-Z][A-Za-z]+$/.test(name ?? '')) {
  console.error('usage: node scripts/generate-migration.mjs <service> <PascalCaseName>');
  process.exit(2);
}
const { migrateServiceSchema } = await import(join(root, 'shared/dist/storage.js'));
const dataSourceModule = await import(join(root, 'services', service, 'dist', 'data-source.js'));
const createDataSource = Object.values(dataSourceModule)[0];

const base = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const scratch = `collab_migration_${Date.now()}`;
const adminUrl = new URL(base);
adminUrl.pathname = '/postgres';
const admin = new pg.Client({ connectionString: adminUrl.toString() });
await admin.connect();
await admin.query(`CREATE DATABASE "${scratch}"`);
const url = new URL(base);
url.pathname = `/${scratch}`;
const db = createDataSource(url.toString(), 2);
try {
  await db.initialize();
  await migrateServiceSchema(db, service);
  const sql = await db.driver.createSchemaBuilder().log();
  if (sql.upQueries.length === 0) {
    console.log('The entities match the migrations; nothing to generate.');
  } else {
    const timestamp = Date.now();
    const className = `${name}${timestamp}`;
    const line = (query) => `    await queryRunner.query(\`${query.query.replace(/\s+/g, ' ').trim().replaceAll('`', '\\`')}\`);`;
    const file = `import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(queryRunner: QueryRunner): Promise<void> {
${sql.upQueries.map(line).join('\n')}
  }

  async down(queryRunner: QueryRunner): Promise<void> {
${[...sql.downQueries].reverse().map(line).join('\n')}
  }
}
`;
    const kebab = name.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
    const path = join(root, 'services', service, 'src', 'migrations', `${timestamp}-${kebab}.ts`);
    writeFileSync(path, file);
    console.log(`Wrote ${path}; review it and add it to src/migrations/index.ts.`);
  }
} finally {
  await db.destroy().catch(() => undefined);
  await admin.query(`DROP DATABASE IF EXISTS "${scratch}" WITH (FORCE)`);
  await admin.end();
}
