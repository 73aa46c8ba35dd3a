/** The gateway's dependencies and app, wired once for the API process and for tests. */
import { createInternalClient, createRedis, QUEUES, type InternalClient, type Logger, type ServiceName } from '@collab/shared';
import { Queue } from 'bullmq';
import { createQueueDashboardRouter } from './admin/queue-dashboard.js';
import { createGatewayApp } from './app.js';
import { createAuthenticator } from './auth/authenticate.js';
import { CredentialStore } from './auth/credentials.js';
import type { GatewayConfig } from './config.js';
import { createServiceProxies } from './proxy.js';

export async function createGateway(config: GatewayConfig, logger: Logger, isDraining: () => boolean) {
  const targets: Record<ServiceName, string> = {
    identity: config.IDENTITY_URL,
    conversation: config.CONVERSATION_URL,
    notification: config.NOTIFICATION_URL,
  };
  const identity: InternalClient = createInternalClient({
    baseUrl: config.IDENTITY_URL,
    internalToken: config.INTERNAL_TOKEN,
    service: 'identity',
    timeoutMs: 2000,
  });
  const credentials = new CredentialStore(identity, config.CREDENTIALS_CACHE_TTL_MS);
  const redis = createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
  const subscriber = createRedis(config.REDIS_URL);
  for (const connection of [redis, subscriber])
    connection.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  await credentials.subscribe(subscriber, config.REDIS_PREFIX, logger);

  // The operators' queue dashboard reads these queues; it answers 404 unless ADMIN_* are set.
  const queueConnection = createRedis(config.REDIS_URL, { maxRetriesPerRequest: null });
  queueConnection.on('error', (error) => logger.warn({ err: error.message }, 'redis connection error'));
  const queues = Object.keys(QUEUES).map((name) => new Queue(name, { connection: queueConnection, prefix: config.REDIS_PREFIX }));
  const operator =
    config.ADMIN_USERNAME && config.ADMIN_PASSWORD ? { username: config.ADMIN_USERNAME, password: config.ADMIN_PASSWORD } : null;

  const app = createGatewayApp({
    logger,
    internalToken: config.INTERNAL_TOKEN,
    authenticate: createAuthenticator(credentials, config.ACCESS_TOKEN_SECRET),
    proxies: createServiceProxies({ targets, timeoutMs: config.UPSTREAM_TIMEOUT_MS, logger }),
    isDraining,
    queueDashboard: { router: createQueueDashboardRouter(queues), credentials: operator },
    readiness: [
      { name: 'redis', check: () => redis.ping() },
      ...(Object.keys(targets) as ServiceName[]).map((name) => ({
        name,
        check: async () => {
          const response = await fetch(`${targets[name]}/readyz`, { signal: AbortSignal.timeout(2000) });
          if (!response.ok) throw new Error(`${name} not ready (${response.status})`);
        },
      })),
    ],
  });
  return {
    app,
    async close() {
      await Promise.all(queues.map((queue) => queue.close()));
      queueConnection.disconnect();
      subscriber.disconnect();
      redis.disconnect();
    },
  };
}
