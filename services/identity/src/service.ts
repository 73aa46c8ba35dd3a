/** Identity's dependencies and app, wired once for the API process, the CLIs and tests. */
import {
  createInternalClient,
  createOutboundClient,
  exportClient,
  SecretBox,
  type Logger,
} from '@collab/shared';
import { openServiceStores } from '@collab/shared/storage';
import { createIdentityApp } from './app.js';
import type { IdentityConfig } from './config.js';
import { createIdentityDataSource } from './data-source.js';
import { deletionProcessor } from './domain/events/relay.js';
import { identityNotices } from './domain/notices.js';
import type { IdentityContext } from './domain/context.js';
import { ephemeralPresenceStore } from './repositories/presence.repository.js';

/**
 * Identity's dependencies (database, Redis, deletion outbox, outbound calls) for the API process
 * and the CLIs: everything but the batch, metrics and idempotency settings, which only the API uses.
 */
export async function createIdentityContext(
  config: Omit<IdentityConfig, 'BATCH_WAIT_MS' | 'METRICS_PORT' | 'IDEMPOTENCY_TTL_HOURS' | 'PRESENCE_TTL_SECONDS'> & { PRESENCE_TTL_SECONDS?: number },
  logger: Logger,
) {
  const stores = await openServiceStores({ dataSource: createIdentityDataSource(config.DATABASE_URL, config.DB_POOL_SIZE), config, logger });
  const { db, redis } = stores;
  const ctx: IdentityContext = {
    db,
    secretBox: new SecretBox(config.SECRETS_ENCRYPTION_KEY),
    logger,
    deletions: deletionProcessor(db, config, logger),
    accessTokenSecret: config.ACCESS_TOKEN_SECRET,
    secretRotationGraceHours: config.SECRET_ROTATION_GRACE_HOURS,
    outbound: createOutboundClient({ allowedCidrs: config.OUTBOUND_ALLOWED_CIDRS }),
    presence: ephemeralPresenceStore(redis, config.REDIS_PREFIX, config.PRESENCE_TTL_SECONDS ?? 30),
    ...identityNotices(redis, config.REDIS_PREFIX, logger),
  };
  return { ctx, stores, close: stores.close };
}

export async function createIdentityService(config: IdentityConfig, logger: Logger, isDraining?: () => boolean) {
  const { ctx, stores } = await createIdentityContext(config, logger);
  const app = createIdentityApp(ctx, {
    logger,
    internalToken: config.INTERNAL_TOKEN,
    isDraining,
    readiness: stores.readiness,
    batch: { db: ctx.db, logger, queue: stores.producer('identity-batch'), waitMs: config.BATCH_WAIT_MS },
    imports: {
      db: ctx.db,
      queue: stores.producer('identity-import'),
      secretBox: ctx.secretBox,
      // The export asks each service for its tables (GET /v1/customer/dbdump).
      services: exportClient({
        conversation: createInternalClient({ baseUrl: config.CONVERSATION_URL, internalToken: config.INTERNAL_TOKEN, service: 'conversation' }),
        notification: createInternalClient({ baseUrl: config.NOTIFICATION_URL, internalToken: config.INTERNAL_TOKEN, service: 'notification' }),
        webhooks: createInternalClient({ baseUrl: config.WEBHOOKS_URL, internalToken: config.INTERNAL_TOKEN, service: 'webhooks' }),
        mail: createInternalClient({ baseUrl: config.MAIL_URL, internalToken: config.INTERNAL_TOKEN, service: 'mail' }),
      }),
    },
    // Sealed: an application's creation answers its secret, which identity stores only encrypted.
    idempotency: stores.idempotencyKeys({ ttlHours: config.IDEMPOTENCY_TTL_HOURS, seal: ctx.secretBox }),
    // Every write of an application's data may change its directory (a presence or preference
    // write too, for simplicity: a reader then asks identity once more).
    afterWrite: async ({ applicationId }) => {
      if (applicationId) await ctx.directoryChanged(applicationId);
    },
  });
  return { app, ctx, close: stores.close };
}
