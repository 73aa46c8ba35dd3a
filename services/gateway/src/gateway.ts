/** The gateway's dependencies and app, wired once for the API process and for tests. */
import {
  ApiError,
  INTERNAL_HEADERS,
  createInternalClient,
  createRedis,
  CredentialStore,
  logRedisErrors,
  processMetrics,
  queuePrefix,
  QUEUES,
  type HttpServerOptions,
  type InternalClient,
  type Logger,
  type ServiceName,
} from '@collab/shared';
import { Queue } from 'bullmq';
import { createQueueDashboardRouter } from './admin/queue-dashboard.js';
import { createGatewayApp } from './app.js';
import { createAuthenticator } from './auth/authenticate.js';
import type { GatewayConfig } from './config.js';
import { createRateLimit } from './limits/rate-limit.js';
import { gatewayMetrics } from './metrics.js';
import { createServiceProxies } from './proxy.js';
import { createSessionStore, sameSecret } from './console/sessions.js';
import { CONSOLE_TOKEN_SECONDS, signServerToken } from './console/server-token.js';
import { createSignInLimit } from './console/sign-in-limit.js';
import { operatorStatus } from './console/operator-status.js';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Over 80 lines: the gateway's wiring, one dependency after another, in the order they need each other.
export async function createGateway(config: GatewayConfig, logger: Logger, isDraining: () => boolean) {
  const metrics = gatewayMetrics(processMetrics());
  const targets: Record<ServiceName, string> = {
    identity: config.IDENTITY_URL,
    conversation: config.CONVERSATION_URL,
    notification: config.NOTIFICATION_URL,
    webhooks: config.WEBHOOKS_URL,
    mail: config.MAIL_URL,
  };
  const identity: InternalClient = createInternalClient({
    baseUrl: config.IDENTITY_URL,
    internalToken: config.INTERNAL_TOKEN,
    service: 'identity',
    timeoutMs: 2000,
  });
  const credentials = new CredentialStore(identity, config.CREDENTIALS_CACHE_TTL_MS);
  const redis = logRedisErrors(createRedis(config.REDIS_URL, { maxRetriesPerRequest: 1 }), logger);
  const subscriber = logRedisErrors(createRedis(config.REDIS_URL), logger);
  await credentials.subscribe(subscriber, config.REDIS_PREFIX, logger);

  // The operators' queue dashboard reads these queues; it answers 404 unless ADMIN_* are set.
  const queueConnection = logRedisErrors(createRedis(config.REDIS_URL, { maxRetriesPerRequest: null }), logger);
  const queues = Object.keys(QUEUES).map((name) => new Queue(name, { connection: queueConnection, prefix: queuePrefix(config.REDIS_PREFIX, name) }));
  // The connection's listener logs its errors; without one of their own, the queues print them
  // again as raw stacks (every Redis reconnect).
  for (const queue of queues) queue.on('error', () => undefined);
  const operator =
    config.ADMIN_USERNAME && config.ADMIN_PASSWORD ? { username: config.ADMIN_USERNAME, password: config.ADMIN_PASSWORD } : null;

  // The rate limit's own connection fails at once while Redis is away (the limiter then lets
  // requests through) instead of holding requests until it is back.
  const limiterConnection =
    config.RATE_LIMIT_PER_MINUTE > 0
      ? logRedisErrors(createRedis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 500 }), logger)
      : null;
  const rateLimit = limiterConnection
    ? createRateLimit(
        limiterConnection,
        { perMinute: config.RATE_LIMIT_PER_MINUTE, burst: config.RATE_LIMIT_BURST, prefix: config.REDIS_PREFIX },
        logger,
        metrics,
      )
    : undefined;

  /** The customer's application, with its secret; 404 for an application of another customer. */
  const ownedApplication = async (customerId: string, applicationId: string, requestId: string) => {
    const application = UUID_PATTERN.test(applicationId) ? await credentials.application(applicationId, requestId) : null;
    if (!application || application.customerId.toLowerCase() !== customerId)
      throw new ApiError('not_found', `Application ${applicationId} not found.`);
    return application;
  };

  const app = createGatewayApp({
    logger,
    internalToken: config.INTERNAL_TOKEN,
    authenticate: createAuthenticator(
      credentials,
      config.ACCESS_TOKEN_SECRET,
      identity,
      undefined,
      config.INBOUND_EMAIL_USERNAME && config.INBOUND_EMAIL_PASSWORD ? { username: config.INBOUND_EMAIL_USERNAME, password: config.INBOUND_EMAIL_PASSWORD } : null,
    ),
    proxies: createServiceProxies({ targets, timeoutMs: config.UPSTREAM_TIMEOUT_MS, logger, metrics }),
    isDraining,
    queueDashboard: { router: createQueueDashboardRouter(queues), credentials: operator },
    rateLimit,
    console: config.CONSOLE
      ? {
          sessions: createSessionStore(redis, config.REDIS_PREFIX, config.CONSOLE_SESSION_HOURS),
          signInLimit: createSignInLimit(redis, config.REDIS_PREFIX),
          trustedProxies: config.TRUSTED_PROXY_CIDRS,
          operator,
          applicationOwner: async (id, requestId) => (await credentials.application(id, requestId))?.customerId ?? null,
          customerSecretMatches: async (id, secret, requestId) => {
            const customer = await credentials.customer(id, requestId);
            return customer !== null && sameSecret(secret, customer.secret);
          },
          deleteApplication: async (customerId, applicationId, name, requestId) => {
            const application = await ownedApplication(customerId, applicationId, requestId);
            if (application.name !== name)
              throw new ApiError('invalid_field', `name is not valid: type the application's name, ${JSON.stringify(application.name)}, to delete it.`);
            const response = await fetch(`${config.IDENTITY_URL}/v1/applications/${application.id}`, {
              method: 'DELETE',
              headers: {
                'content-type': 'application/json',
                [INTERNAL_HEADERS.internalToken]: config.INTERNAL_TOKEN,
                [INTERNAL_HEADERS.customerId]: customerId,
                [INTERNAL_HEADERS.requestId]: requestId,
              },
              body: JSON.stringify({ secret: application.secret }),
            });
            if (!response.ok) throw new ApiError('bad_gateway', `The identity service refused the delete (${response.status}).`);
          },
          mintServerToken: async (customerId, applicationId, requestId) => {
            const application = await ownedApplication(customerId, applicationId, requestId);
            return signServerToken(application.id, application.secret, CONSOLE_TOKEN_SECONDS);
          },
          operatorStatus: (requestId) => operatorStatus(targets, queues, identity, requestId),
        }
      : undefined,
    readiness: [
      { name: 'redis', check: () => redis.ping() },
      ...(Object.keys(targets) as ServiceName[]).map((name) => ({ name, check: () => serviceReady(name, targets[name]) })),
    ],
  });
  // Slow clients (slowloris): a request's head must arrive within HEADERS_TIMEOUT_MS and all of it
  // within REQUEST_TIMEOUT_MS, or it gets 408 and its connection is closed. Waiting for a service
  // is not the client's time (UPSTREAM_TIMEOUT_MS bounds that).
  const serverOptions: HttpServerOptions = {
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
  };
  return {
    app,
    serverOptions,
    async close() {
      await Promise.all(queues.map((queue) => queue.close()));
      queueConnection.disconnect();
      subscriber.disconnect();
      redis.disconnect();
      limiterConnection?.disconnect();
    },
  };
}

/**
 * A service's readiness as its /readyz says. A service of ours answers 200, or 503 with its checks;
 * any other answer comes from another program on its port, which the service then cannot bind
 * (it logs the same and tries again): the answer names the port, not a status alone.
 */
async function serviceReady(name: ServiceName, target: string): Promise<void> {
  const response = await fetch(`${target}/readyz`, { signal: AbortSignal.timeout(2000) });
  if (response.ok) return;
  const body: unknown = await response.json().catch(() => null);
  if (response.status === 503 && typeof body === 'object' && body !== null && 'checks' in body) throw new Error(`${name} not ready (503)`);
  const port = new URL(target).port || '80';
  throw new Error(`${name} not ready: port ${port} is taken by another program (it answered ${response.status})`);
}
