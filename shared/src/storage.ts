/**
 * What only services with a database use: the TypeORM data source, migrations, the stores an API
 * process opens (database, Redis, readiness checks), the transactional outbox, the deletion
 * cascade's purge and the Idempotency-Key records. A separate entry point (`@collab/shared/storage`),
 * so that the gateway, which has no database, never loads TypeORM and pg.
 */
export * from './db.js';
export * from './migrate-main.js';
export * from './service-stores.js';
export * from './outbox/index.js';
export * from './purge/index.js';
export * from './idempotency/index.js';
