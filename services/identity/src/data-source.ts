import { createServiceDataSource } from '@collab/shared/storage';
import { IDENTITY_SCHEMA, identityEntities } from './entities/index.js';
import { identityMigrations } from './migrations/index.js';

export function createIdentityDataSource(url: string, poolSize?: number) {
  return createServiceDataSource({
    url,
    schema: IDENTITY_SCHEMA,
    entities: identityEntities,
    migrations: identityMigrations,
    poolSize,
    applicationName: 'collab-identity',
  });
}
