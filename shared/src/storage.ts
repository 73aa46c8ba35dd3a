/**
 * What only services with a database use: the TypeORM data source, migrations and the storage
 * readiness checks. A separate entry point (`@collab/shared/storage`), so that the gateway, which
 * has no database, never loads TypeORM and pg.
 */
export * from './db.js';
export * from './migrate-main.js';
export * from './readiness.js';
