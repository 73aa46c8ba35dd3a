/** Creates the database if needed and applies the mail service's pending migrations. */
import { runMigrateMain } from '@collab/shared/storage';
import { createMailDataSource } from './data-source.js';
import { MAIL_SCHEMA } from './entities/index.js';

runMigrateMain({ service: 'mail', schema: MAIL_SCHEMA, createDataSource: createMailDataSource });
