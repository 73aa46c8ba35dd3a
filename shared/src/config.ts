/**
 * Environment configuration, validated once at boot. Every bad variable is reported at once,
 * and values marked secret never appear in the error text.
 */

import { parseCidrList, type Cidr } from './outbound/address-policy.js';
import { parseRedisUrl } from './redis-url.js';

export interface VarSpec<T> {
  /** Used when the variable is unset or empty; without it the variable is required. */
  default?: T;
  parse: (raw: string) => T;
  description: string;
}

type Spec = Record<string, VarSpec<unknown>>;
export type ConfigOf<S extends Spec> = { [K in keyof S]: S[K] extends VarSpec<infer T> ? T : never };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export function loadConfig<S extends Spec>(spec: S, env: NodeJS.ProcessEnv = process.env): ConfigOf<S> {
  const problems: string[] = [];
  const config: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(spec)) {
    const raw = env[name];
    if (raw === undefined || raw === '') {
      if (rule.default === undefined) problems.push(`${name} is required: ${rule.description}`);
      else config[name] = rule.default;
      continue;
    }
    try {
      config[name] = rule.parse(raw);
    } catch (error) {
      problems.push(`${name} is invalid: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config as ConfigOf<S>;
}

export const vars = {
  string: (description: string, defaultValue?: string): VarSpec<string> => ({
    description,
    default: defaultValue,
    parse: (raw) => raw,
  }),
  /** A secret: at least 16 characters; never echoed. */
  secret: (description: string, defaultValue?: string): VarSpec<string> => ({
    description,
    default: defaultValue,
    parse: (raw) => {
      if (raw.length < 16) throw new Error('must be at least 16 characters');
      return raw;
    },
  }),
  url: (description: string, defaultValue?: string): VarSpec<string> => ({
    description,
    default: defaultValue,
    parse: (raw) => new URL(raw).toString().replace(/\/$/, ''),
  }),
  port: (description: string, defaultValue?: number): VarSpec<number> => ({
    description,
    default: defaultValue,
    parse: (raw) => {
      const port = Number(raw);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('must be a port number');
      return port;
    },
  }),
  integer: (description: string, defaultValue?: number): VarSpec<number> => ({
    description,
    default: defaultValue,
    parse: (raw) => {
      if (!/^\d+$/.test(raw)) throw new Error('must be a non-negative integer');
      return Number(raw);
    },
  }),
  uuid: (description: string, defaultValue?: string): VarSpec<string> => ({
    description,
    default: defaultValue,
    parse: (raw) => {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw))
        throw new Error('must be a UUID');
      return raw.toLowerCase();
    },
  }),
  /** A switch: `on`/`off` (also `true`/`false`). */
  onOff: (description: string, defaultValue?: boolean): VarSpec<boolean> => ({
    description,
    default: defaultValue,
    parse: (raw) => {
      const value = raw.trim().toLowerCase();
      if (value === 'on' || value === 'true') return true;
      if (value === 'off' || value === 'false') return false;
      throw new Error('must be on or off');
    },
  }),
  /** Comma-separated CIDR ranges (`10.0.0.0/8, fd00::/8`); the error names every entry that is not one. */
  cidrs: (description: string, defaultValue?: Cidr[]): VarSpec<Cidr[]> => ({
    description,
    default: defaultValue,
    parse: parseCidrList,
  }),
};

/** Variables every service reads. */
export const commonVars = {
  DATABASE_URL: vars.url('PostgreSQL connection URL', 'postgres://postgres@127.0.0.1:5432/collab'),
  REDIS_URL: {
    description: 'Redis connection URL: redis://host:port for one server, redis+cluster://host:port,host:port for a Redis Cluster',
    default: 'redis://127.0.0.1:6379',
    parse: parseRedisUrl,
  } satisfies VarSpec<string>,
  /**
   * Namespaces BullMQ queues and pub/sub channels so that several systems can share one Redis.
   * No braces: a `{…}` in it would become the cluster hash tag of every key, putting all queues
   * in one slot.
   */
  REDIS_PREFIX: {
    description: 'Prefix of every Redis key and channel of this system',
    default: 'collab',
    parse: (raw: string) => {
      if (/[{}]/.test(raw)) throw new Error('must not contain { or }');
      return raw;
    },
  } satisfies VarSpec<string>,
  INTERNAL_TOKEN: vars.secret('Shared credential the gateway presents to services'),
  LOG_LEVEL: vars.string('pino log level', 'info'),
};

/**
 * What every process reads before (or without) its service's config: where it listens, its log
 * level and its shutdown deadline. Read when asked, so a process's environment is read once per use.
 */
export const processVars = {
  HOST: vars.string('Address the process listens on, its metrics port included', '0.0.0.0'),
  LOG_LEVEL: commonVars.LOG_LEVEL,
  SHUTDOWN_TIMEOUT_MS: vars.integer('Deadline for a graceful stop after SIGTERM', 10_000),
  DB_PREPARED_STATEMENTS: vars.onOff(
    'Name each parameterised statement so that PostgreSQL parses and plans it once per connection (off behind a pooler that cannot keep prepared statements)',
    true,
  ),
};

export function processSettings(env: NodeJS.ProcessEnv = process.env): ConfigOf<typeof processVars> {
  return loadConfig(processVars, env);
}

/** The internal port of a process's Prometheus `GET /metrics` endpoint; each process has its own default. */
export function metricsPortVar(defaultPort: number): VarSpec<number> {
  return vars.port('Internal port of the Prometheus GET /metrics endpoint (0 disables it)', defaultPort);
}

/** Default metrics ports of the workers (the APIs use 9080-9085). */
export const WORKER_METRICS_PORTS = {
  'identity-batch': 9091,
  'conversation-purge': 9092,
  'notification-purge': 9093,
  'webhooks-delivery': 9094,
  'mail-send': 9095,
} as const;

/** Variables of the processes that call customer-given URLs (webhooks, URL verification, link-preview pages). */
export const outboundVars = {
  OUTBOUND_ALLOWED_CIDRS: vars.cidrs(
    'Comma-separated CIDR ranges that outbound requests may reach although they are not public (intranet receivers; tests use 127.0.0.0/8)',
    [],
  ),
};

/** Variables of the services whose writes take an Idempotency-Key (http/idempotency.ts). */
export const idempotencyVars = {
  IDEMPOTENCY_TTL_HOURS: {
    description: 'How long an Idempotency-Key and the answer it replays are kept, in hours',
    default: 24,
    parse: (raw: string) => {
      if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error('must be a positive integer');
      return Number(raw);
    },
  } satisfies VarSpec<number>,
};

/** Variables of the processes that run BullMQ workers. */
export const workerVars = {
  WORKER_CONCURRENCY: vars.integer('Jobs one worker process runs at once', 2),
  JOB_LOCK_MS: vars.integer('How long a job stays locked without a heartbeat before it counts as stalled and is retried', 30_000),
  PURGE_BATCH_SIZE: vars.integer('Rows deleted per transaction by purge jobs', 1000),
  PURGE_ROWS_PER_SECOND: vars.integer('At most this many rows a second deleted by one purge job, so that other applications keep their latency (0: unpaced)', 10_000),
  OUTBOX_POLL_MS: vars.integer(
    'How often an outbox relay looks for due entries besides being woken when one is recorded (milliseconds)',
    5000,
  ),
};

/**
 * Each service may keep its schema in a database of its own (a PostgreSQL cluster sized for its
 * load): `<SERVICE>_DATABASE_URL`, DATABASE_URL when unset. Services never read each other's
 * tables, so nothing else changes.
 */
export const SERVICE_DATABASE_VARS = {
  identity: 'IDENTITY_DATABASE_URL',
  conversation: 'CONVERSATION_DATABASE_URL',
  notification: 'NOTIFICATION_DATABASE_URL',
  webhooks: 'WEBHOOKS_DATABASE_URL',
  mail: 'MAIL_DATABASE_URL',
} as const;

export type DatabaseService = keyof typeof SERVICE_DATABASE_VARS;

/** The variable of a service's own database, empty (DATABASE_URL applies) unless set. */
export function serviceDatabaseVar(service: DatabaseService): VarSpec<string> {
  return vars.url(`PostgreSQL connection URL of the ${service} service's database (default: DATABASE_URL)`, '');
}

/** The loaded config with DATABASE_URL replaced by the service's own database URL when that is set. */
export function withServiceDatabase<C extends { DATABASE_URL: string }>(config: C, service: DatabaseService): C {
  const own = (config as Record<string, unknown>)[SERVICE_DATABASE_VARS[service]];
  return typeof own === 'string' && own !== '' ? { ...config, DATABASE_URL: own } : config;
}
