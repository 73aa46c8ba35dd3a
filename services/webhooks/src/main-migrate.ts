/** Creates the database if needed and applies the webhooks service's pending migrations. */
import { runMigrateMain } from '@collab/shared/storage';
import { createWebhooksDataSource } from './data-source.js';
import { WEBHOOKS_SCHEMA } from './entities/index.js';

runMigrateMain({ service: 'webhooks', schema: WEBHOOKS_SCHEMA, createDataSource: createWebhooksDataSource });
