/** Creates the database if needed and applies the identity service's pending migrations. */
import { runMigrateMain } from '@collab/shared/storage';
import { createIdentityDataSource } from './data-source.js';
import { IDENTITY_SCHEMA } from './entities/index.js';

runMigrateMain({ service: 'identity', schema: IDENTITY_SCHEMA, createDataSource: createIdentityDataSource });
