/**
 * A whole system for one test file, in this process: its own database, its own Redis prefix and
 * free ports; identity, conversation and notification apps behind a real gateway over HTTP.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createHttpServer,
  createLogger,
  createOutboundClient,
  createProducer,
  SERVICE_DATABASE_VARS,
  startWorker,
  workerVars,
  type DatabaseService,
  type HttpServerOptions,
  type Logger,
} from '@collab/shared';
import { ensureDatabase, migrateServiceSchema } from '@collab/shared/storage';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { DataSource } from 'typeorm';
import { deleteRedisPrefix, dropDatabase } from '@collab/shared/devkit';
import { loadConversationWorkerConfig } from '../../services/conversation/src/config.js';
import { createConversationDataSource } from '../../services/conversation/src/data-source.js';
import { purgeJobs as conversationPurgeJobs } from '../../services/conversation/src/jobs/purge.jobs.js';
import { conversationEvents, conversationLinkPreviews, createConversationService } from '../../services/conversation/src/service.js';
import { loadGatewayConfig } from '../../services/gateway/src/config.js';
import { createGateway } from '../../services/gateway/src/gateway.js';
import { loadIdentityConfig, loadIdentityWorkerConfig } from '../../services/identity/src/config.js';
import { createIdentityDataSource } from '../../services/identity/src/data-source.js';
import { createCustomer, ensureBootCustomer } from '../../services/identity/src/domain/customers/customers.js';
import { batchJobs } from '../../services/identity/src/jobs/batch.jobs.js';
import { identityImportJobs } from '../../services/identity/src/jobs/import.jobs.js';
import { createIdentityService } from '../../services/identity/src/service.js';
import { loadNotificationWorkerConfig } from '../../services/notification/src/config.js';
import { createNotificationDataSource } from '../../services/notification/src/data-source.js';
import { purgeJobs as notificationPurgeJobs } from '../../services/notification/src/jobs/purge.jobs.js';
import { createNotificationService, notificationEvents } from '../../services/notification/src/service.js';
import { loadMailConfig, loadMailWorkerConfig } from '../../services/mail/src/config.js';
import { createMailDataSource } from '../../services/mail/src/data-source.js';
import { mailJobs } from '../../services/mail/src/jobs/mail.jobs.js';
import { createMailService, mailContext } from '../../services/mail/src/service.js';
import { loadWebhooksConfig } from '../../services/webhooks/src/config.js';
import { createWebhooksDataSource } from '../../services/webhooks/src/data-source.js';
import { guardedPoster } from '../../services/webhooks/src/domain/deliveries/poster.js';
import { deliveryJobs } from '../../services/webhooks/src/jobs/delivery.jobs.js';
import { purgeJobs as webhooksPurgeJobs } from '../../services/webhooks/src/jobs/purge.jobs.js';
import { createWebhooksService } from '../../services/webhooks/src/service.js';
import { createApplication, type TestApplication } from './client.js';

export interface TestSystem {
  /** The gateway's base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  customer: { id: string; secret: string };
  /** Another customer, stored as identity stores one (its secret encrypted with this system's key). */
  addCustomer(): Promise<{ id: string; secret: string }>;
  env: Record<string, string>;
  /** A connection to this system's own database, for assertions on stored state. */
  sql: pg.Pool;
  serviceUrls: Record<'identity' | 'conversation' | 'notification' | 'webhooks' | 'mail', string>;
  stop(): Promise<void>;
}

/** The URL of database `name` on the test PostgreSQL server. */
export function databaseUrlFor(name: string): string {
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${name}`;
  return url.toString();
}

/** Listens as a process does (the shared server factory, with the app's own server options). */
async function listen(app: RequestListener, options: HttpServerOptions = {}): Promise<{ server: Server; url: string }> {
  const server = createHttpServer(app, options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * A server listening on a free port before its app exists, so that services which call each other
 * can all be told each other's URLs; `serve` plugs the app in.
 */
async function reserveServer(): Promise<{ server: Server; url: string; serve(app: RequestListener): void }> {
  let app: RequestListener | null = null;
  const server = createHttpServer((req, res) => {
    if (app) app(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve(handler) {
      app = handler;
    },
  };
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * Creates this system's database and applies every service's migrations, as `npm start` does:
 * each service in its own database when `env` names one (IDENTITY_DATABASE_URL, …).
 */
/** Every service that owns a schema, with its data source: keyed by the services that have a database, so none is left out. */
export const SERVICE_DATA_SOURCES: Record<DatabaseService, (url: string, poolSize?: number) => DataSource> = {
  identity: createIdentityDataSource,
  conversation: createConversationDataSource,
  notification: createNotificationDataSource,
  webhooks: createWebhooksDataSource,
  mail: createMailDataSource,
};

export async function migrateAll(databaseUrl: string, env: Record<string, string | undefined> = {}): Promise<void> {
  await ensureDatabase(databaseUrl);
  for (const [schema, create] of Object.entries(SERVICE_DATA_SOURCES) as [DatabaseService, (url: string, poolSize?: number) => DataSource][]) {
    const url = env[SERVICE_DATABASE_VARS[schema]] || databaseUrl;
    if (url !== databaseUrl) await ensureDatabase(url);
    const db = create(url, 2);
    await db.initialize();
    await migrateServiceSchema(db, schema);
    await db.destroy();
  }
}

type SystemOptions = { logger?: Logger; workers?: boolean; outboxRelay?: boolean; databasePerService?: boolean; env?: Record<string, string> };

/** The databases of a system whose services each have their own: `<name>_<service>`. */
function serviceDatabaseNames(databaseName: string): Record<DatabaseService, string> {
  return Object.fromEntries(
    (Object.keys(SERVICE_DATABASE_VARS) as DatabaseService[]).map((service) => [service, `${databaseName}_${service}`]),
  ) as Record<DatabaseService, string>;
}

/** Drops the system's database and, with a database per service, those too. */
async function dropDatabases(env: Record<string, string>, databaseName: string, perService: boolean): Promise<void> {
  await dropDatabase(env.DATABASE_URL, databaseName);
  if (perService) for (const name of Object.values(serviceDatabaseNames(databaseName))) await dropDatabase(env.DATABASE_URL, name);
}

/**
 * Webhook retries in test systems: the decided schedule (5 s, 30 s, 2 min…) with every delay cut
 * to a fraction of a second, so that a test sees several retries; the schedule itself is checked
 * on its own (test/webhooks/attempts.test.ts).
 */
const TEST_RETRY_SCHEDULE = { delaysMs: [150, 300, 600, 900, 1200, 1500], laterDelayMs: 2000 };

/**
 * `workers: false` starts no in-process worker (tests that run worker processes themselves);
 * `outboxRelay: false` starts the queue workers but not the outbox relays (tests that run
 * their own, e.g. one that cannot reach a service); `env` adds or overrides variables of every
 * service (e.g. `BATCH_WAIT_MS`, or a REDIS_URL of a Redis Cluster); `databasePerService` gives
 * each service a database of its own (`<SERVICE>_DATABASE_URL`), DATABASE_URL's then holding
 * nothing. A start that fails half-way removes the database and Redis keys
 * it made before the error goes on.
 */
export async function startSystem(options: SystemOptions = {}): Promise<TestSystem> {
  const suffix = randomBytes(6).toString('hex');
  const databaseName = `collab_test_${suffix}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrlFor(databaseName),
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `test-${suffix}`,
    INTERNAL_TOKEN: randomBytes(24).toString('hex'),
    ACCESS_TOKEN_SECRET: randomBytes(32).toString('hex'),
    FILE_URL_SECRET: randomBytes(32).toString('hex'),
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DB_POOL_SIZE: '5',
    // Tests never reach the internet: a link in a test message is not fetched, unless a test
    // turns previews on with its pages on 127.0.0.1 (test/previews).
    LINK_PREVIEWS: 'off',
    // No SMTP server, and mails due long after the test: only the mail tests (which set both) send them.
    EMAIL_DELAY_SECONDS: '3600',
    ...(options.databasePerService
      ? Object.fromEntries(
          Object.entries(serviceDatabaseNames(databaseName)).map(([service, name]) => [SERVICE_DATABASE_VARS[service as DatabaseService], databaseUrlFor(name)]),
        )
      : {}),
    ...options.env,
  };
  try {
    return await buildSystem(env, databaseName, options);
  } catch (error) {
    // What stop() would have removed.
    await dropDatabases(env, databaseName, options.databasePerService ?? false).catch(() => undefined);
    await deleteRedisPrefix(env.REDIS_URL, env.REDIS_PREFIX).catch(() => undefined);
    throw error;
  }
}

export type FileSystemOptions = SystemOptions & {
  /** Runs first when the file's tests are over, e.g. to kill the processes they spawned. */
  beforeStop?: () => void | Promise<void>;
  /** How long the start (and `started`) may take, when it needs more than the usual hook time. */
  startTimeoutMs?: number;
};

/**
 * The system of one test file: started before its tests, stopped after them, also when the start
 * or `started` failed half-way. `started` receives it, to keep it in the file's own variables and
 * create the data every test of the file reads.
 */
export function systemForFile(started: (system: TestSystem) => unknown, options: FileSystemOptions = {}): void {
  const { beforeStop, startTimeoutMs, ...systemOptions } = options;
  let system: TestSystem | undefined;
  beforeAll(async () => {
    system = await startSystem(systemOptions);
    await started(system);
  }, startTimeoutMs);
  afterAll(async () => {
    await beforeStop?.();
    await system?.stop();
  });
}

/** A test file's system (as systemForFile) with one application in it, created as a customer does. */
export function systemWithApplication(
  name: string,
  started: (ready: { system: TestSystem; app: TestApplication }) => unknown,
  options: FileSystemOptions = {},
): void {
  systemForFile(async (system) => started({ system, app: await createApplication(system, name) }), options);
}

/** The migrations' digest, which names their template: read once per test process. */
let migrationsDigest: string | undefined;
function templateName(): string {
  if (!migrationsDigest) {
    const services = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'services');
    const digest = createHash('sha256');
    for (const service of Object.keys(SERVICE_DATA_SOURCES).sort())
      for (const file of readdirSync(join(services, service, 'src', 'migrations')).sort())
        digest.update(file).update(readFileSync(join(services, service, 'src', 'migrations', file)));
    migrationsDigest = digest.digest('hex').slice(0, 16);
  }
  return `collab_template_${migrationsDigest}`;
}

/**
 * A test system's database as a copy of one migrated template (CREATE DATABASE … TEMPLATE): a
 * copy takes about a tenth of migrating a new database, which every test file does. The
 * template's name carries a digest of the migrations, so a changed migration gets a template of
 * its own; the test processes make and copy it under an advisory lock, one at a time. It is
 * migrated under another name and renamed once complete, so that a run stopped half-way never
 * leaves a template that later runs would copy.
 */
async function createMigratedDatabase(databaseUrl: string): Promise<void> {
  const template = templateName();
  const admin = new pg.Client({ connectionString: databaseUrlFor('postgres') });
  await admin.connect();
  try {
    await admin.query(`SELECT pg_advisory_lock(hashtext('collab test database template'))`);
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
    if (rowCount === 0) {
      const building = `${template}_building`;
      await admin.query(`DROP DATABASE IF EXISTS "${building}"`);
      await migrateAll(databaseUrlFor(building));
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${template}"`);
    }
    await admin.query(`CREATE DATABASE "${new URL(databaseUrl).pathname.slice(1)}" TEMPLATE "${template}"`);
  } finally {
    await admin.end();
  }
}

async function buildSystem(env: Record<string, string>, databaseName: string, options: SystemOptions): Promise<TestSystem> {
  const logger = options.logger ?? createLogger('test', env.LOG_LEVEL);
  if (options.databasePerService) await migrateAll(env.DATABASE_URL, env);
  else await createMigratedDatabase(env.DATABASE_URL);

  // Services call each other (conversation and notification ask identity; identity cascades
  // deletions into them), so their servers listen before any of them is built.
  const servers = {
    identity: await reserveServer(),
    conversation: await reserveServer(),
    notification: await reserveServer(),
    webhooks: await reserveServer(),
    mail: await reserveServer(),
  };
  env.IDENTITY_URL = servers.identity.url;
  env.CONVERSATION_URL = servers.conversation.url;
  env.NOTIFICATION_URL = servers.notification.url;
  env.WEBHOOKS_URL = servers.webhooks.url;
  env.MAIL_URL = servers.mail.url;
  const identity = await createIdentityService(loadIdentityConfig(env), logger.child({ service: 'identity' }));
  const customer = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
  await ensureBootCustomer(identity.ctx, customer);
  // The worker's configs: the API's variables and those of the relays run below.
  const conversationConfig = loadConversationWorkerConfig(env);
  const notificationConfig = loadNotificationWorkerConfig(env);
  const conversation = await createConversationService(conversationConfig, logger.child({ service: 'conversation' }));
  const notification = await createNotificationService(notificationConfig, logger.child({ service: 'notification' }));
  const webhooksConfig = loadWebhooksConfig(env);
  const webhooks = await createWebhooksService(webhooksConfig, logger.child({ service: 'webhooks' }));
  const mailConfig = loadMailWorkerConfig(env);
  const mail = await createMailService(loadMailConfig(env), logger.child({ service: 'mail' }));

  servers.identity.serve(identity.app);
  servers.conversation.serve(conversation.app);
  servers.notification.serve(notification.app);
  servers.webhooks.serve(webhooks.app);
  servers.mail.serve(mail.app);
  // Workers drain the purge, link-preview, batch and delivery queues and relay identity's outbox
  // as the worker processes do (tests that kill workers start their own processes instead).
  const queueConnection = { redisUrl: env.REDIS_URL, prefix: env.REDIS_PREFIX };
  const deliveryQueue = createProducer('webhooks-delivery', queueConnection);
  const linkPreviews = conversationLinkPreviews(conversation.ctx.db, conversationConfig, logger.child({ service: 'conversation-worker' }));
  const workers = options.workers === false ? [] : [
    startWorker('conversation-purge', conversationPurgeJobs(conversation.ctx.db, { batchSize: conversationConfig.PURGE_BATCH_SIZE, rowsPerSecond: conversationConfig.PURGE_ROWS_PER_SECOND }), {
      ...queueConnection,
      logger: logger.child({ service: 'conversation-worker' }),
    }),
    startWorker('conversation-link-previews', linkPreviews.handlers, {
      ...queueConnection,
      logger: logger.child({ service: 'conversation-worker' }),
      concurrency: conversationConfig.LINK_PREVIEW_CONCURRENCY,
    }),
    startWorker('notification-purge', notificationPurgeJobs(notification.ctx.db, { batchSize: notificationConfig.PURGE_BATCH_SIZE, rowsPerSecond: notificationConfig.PURGE_ROWS_PER_SECOND }), {
      ...queueConnection,
      logger: logger.child({ service: 'notification-worker' }),
    }),
    startWorker('webhooks-purge', webhooksPurgeJobs(webhooks.ctx.db, { batchSize: webhooksConfig.PURGE_BATCH_SIZE, rowsPerSecond: webhooksConfig.PURGE_ROWS_PER_SECOND }), {
      ...queueConnection,
      logger: logger.child({ service: 'webhooks-worker' }),
    }),
    startWorker('identity-batch', batchJobs(identity.ctx.db, identity.ctx.directoryChanged), {
      ...queueConnection,
      logger: logger.child({ service: 'identity-worker' }),
    }),
    startWorker('identity-import', identityImportJobs(identity.ctx.db, loadIdentityWorkerConfig(env), identity.ctx.secretBox, identity.ctx), {
      ...queueConnection,
      logger: logger.child({ service: 'identity-worker' }),
      concurrency: 1,
    }),
    startWorker(
      'webhooks-delivery',
      deliveryJobs({
        db: webhooks.ctx.db,
        credentials: webhooks.ctx.applications,
        post: guardedPoster(createOutboundClient({ allowedCidrs: webhooksConfig.OUTBOUND_ALLOWED_CIDRS })),
        queue: deliveryQueue,
        retryWindowMs: webhooksConfig.WEBHOOK_RETRY_HOURS * 3600 * 1000,
        retrySchedule: TEST_RETRY_SCHEDULE,
      }),
      { ...queueConnection, logger: logger.child({ service: 'webhooks-worker' }), concurrency: webhooksConfig.WORKER_CONCURRENCY },
    ),
    startWorker('mail-send', mailJobs(mailContext(mailConfig, mail.ctx.db, mail.ctx.queue, logger.child({ service: 'mail-worker' }))), {
      ...queueConnection,
      logger: logger.child({ service: 'mail-worker' }),
    }),
  ];
  // The outbox relays of the identity, conversation and notification workers: deletions, events
  // and the notifications that messages cause.
  const outboxRelays =
    (options.outboxRelay ?? options.workers) === false
      ? []
      : [
          identity.ctx.deletions,
          conversationEvents(conversation.ctx, conversationConfig, logger.child({ service: 'conversation-worker' })),
          notificationEvents(notification.ctx, notificationConfig, logger.child({ service: 'notification-worker' })),
        ].map((outbox) => outbox.startRelay({ pollMs: workerVars.OUTBOX_POLL_MS.default! }));
  const gatewayEnv = {
    ...env,
    PORT: '0',
    IDENTITY_URL: servers.identity.url,
    CONVERSATION_URL: servers.conversation.url,
    NOTIFICATION_URL: servers.notification.url,
    WEBHOOKS_URL: servers.webhooks.url,
    MAIL_URL: servers.mail.url,
  };
  const gateway = await createGateway(loadGatewayConfig(gatewayEnv), logger.child({ service: 'gateway' }), () => false);
  const gatewayServer = await listen(gateway.app, gateway.serverOptions);
  const sql = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
  // DROP DATABASE … WITH (FORCE) at stop() may terminate an idle connection the pool still holds.
  sql.on('error', () => undefined);

  return {
    url: gatewayServer.url,
    customer,
    addCustomer: () => createCustomer(identity.ctx),
    env: gatewayEnv,
    sql,
    serviceUrls: {
      identity: servers.identity.url,
      conversation: servers.conversation.url,
      notification: servers.notification.url,
      webhooks: servers.webhooks.url,
      mail: servers.mail.url,
    },
    async stop() {
      await close(gatewayServer.server);
      for (const { server } of Object.values(servers)) await close(server);
      await gateway.close();
      await Promise.all([...workers.map((worker) => worker.close()), ...outboxRelays.map((relay) => relay.stop())]);
      await deliveryQueue.close();
      linkPreviews.close();
      await Promise.all([identity.close(), conversation.close(), notification.close(), webhooks.close(), mail.close()]);
      await sql.end();
      await dropDatabases(env, databaseName, options.databasePerService ?? false);
      // The queues' keys (kept jobs, events) of this system's prefix go too.
      await deleteRedisPrefix(env.REDIS_URL, env.REDIS_PREFIX);
    },
  };
}
