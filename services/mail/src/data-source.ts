import { createServiceDataSource } from '@collab/shared/storage';
import { MAIL_SCHEMA, mailEntities } from './entities/index.js';
import { mailMigrations } from './migrations/index.js';

export function createMailDataSource(url: string, poolSize?: number) {
  return createServiceDataSource({
    url,
    schema: MAIL_SCHEMA,
    entities: mailEntities,
    migrations: mailMigrations,
    poolSize,
    applicationName: 'collab-mail',
  });
}
