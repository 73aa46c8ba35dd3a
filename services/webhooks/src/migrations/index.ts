import { CreateWebhooksSchema1795400000000 } from './1795400000000-create-webhooks-schema.js';

/** Every webhooks migration, oldest first. */
export const webhooksMigrations = [CreateWebhooksSchema1795400000000];
