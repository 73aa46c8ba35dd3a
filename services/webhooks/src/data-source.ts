import { createServiceDataSource } from '@collab/shared/storage';
import { WEBHOOKS_SCHEMA, webhooksEntities } from './entities/index.js';
import { webhooksMigrations } from './migrations/index.js';

export function createWebhooksDataSource(url: string, poolSize?: number) {
  return createServiceDataSource({
    url,
    schema: WEBHOOKS_SCHEMA,
    entities: webhooksEntities,
    migrations: webhooksMigrations,
    poolSize,
    applicationName: 'collab-webhooks',
  });
}
