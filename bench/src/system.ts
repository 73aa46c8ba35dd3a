/**
 * The system under load: either one this harness starts (the real processes from services/<name>/dist,
 * as `npm start` runs them, against a database of its own (or one per service, `<database>_<service>`;
 * dropped when it stops), its own Redis prefix and free ports), or one already running (BENCH_URL),
 * measured from outside.
 */
import { spawn, fork, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVICE_DATABASE_VARS, type DatabaseService } from '@collab/shared';
import { deleteRedisPrefix, dropDatabase, freePort, until } from '@collab/shared/devkit';
import { ensureDatabase, ServiceClient } from '@collab/shared/storage';
import pg from 'pg';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** scripts/processes.mjs: what `npm start` runs, with which environment. */
interface ProcessCatalog {
  /** The secrets the processes share; `npm start` generates them the same way. */
  DEV_SECRET_NAMES: string[];
  MIGRATIONS: { name: string; script: string }[];
  processes(env: Record<string, string | undefined>): { name: string; script: string; env: Record<string, string> }[];
}
const catalog = (await import(join(ROOT, 'scripts', 'processes.mjs'))) as ProcessCatalog;

export interface BenchProcess {
  name: string;
  pid: number;
  /** An HTTP service (memory target applies), not a worker or the balancer. */
  http: boolean;
}

export interface ScaleOut {
  /** A second gateway whose CONVERSATION_URL is the balancer. */
  url: string;
  replicas(count: 1 | 2): Promise<void>;
  stop(): Promise<void>;
}

export interface System {
  /** The gateway. */
  url: string;
  customer: { id: string; secret: string };
  /** The system's database, for seeding and the raw-SQL baselines. */
  sql: pg.Pool;
  /** Its URL (identity's, with a database per service), for baseline servers that open their own pool. */
  databaseUrl: string;
  /** The names of the system's databases: one, or one per service. */
  databaseNames: string[];
  /** The services themselves, reached with the internal headers; null when unknown. */
  direct: { identity: string; conversation: string; internalToken: string } | null;
  /**
   * The webhooks service (reached with direct's internal token) of a system whose processes may
   * post events to receivers on loopback; null for a running system.
   */
  webhooks: string | null;
  /** Processes whose memory can be read (none for a running system). */
  processes(): BenchProcess[];
  /** Starts a second conversation replica behind a balancer; null for a running system. */
  scaleOut: (() => Promise<ScaleOut>) | null;
  /** Where the processes' output went. */
  logDir: string | null;
  stop(): Promise<void>;
}

/** Until the process at `url` answers ready (it refuses connections until it listens). */
const ready = (url: string) =>
  until(() => fetch(`${url}/readyz`).then((response) => response.ok, () => false), `${url}/readyz`, 60_000, 100);

/** Child processes of this run: each logs to its own file; stopped with SIGTERM, then SIGKILL. */
class Processes {
  private readonly children = new Map<string, { child: ChildProcess; http: boolean }>();

  constructor(
    readonly logDir: string,
    /** Extra node flags per process name (e.g. --cpu-prof). */
    private readonly nodeFlags: (name: string) => string[],
  ) {}

  start(name: string, script: string, env: Record<string, string | undefined>, http: boolean): ChildProcess {
    const log = openSync(join(this.logDir, `${name}.log`), 'a');
    const child = spawn(process.execPath, [...this.nodeFlags(name), script], { env, cwd: ROOT, stdio: ['ignore', log, log] });
    closeSync(log);
    this.children.set(name, { child, http });
    child.once('exit', (code, signal) => {
      if (this.children.get(name)?.child === child) {
        this.children.delete(name);
        if (!this.stopping) console.error(`[bench] ${name} exited (${signal ?? code}); see ${join(this.logDir, `${name}.log`)}`);
      }
    });
    return child;
  }

  /** A process started with node's IPC channel (the balancer). */
  fork(name: string, script: string, args: string[]): ChildProcess {
    const child = fork(script, args, { stdio: 'ignore' });
    this.children.set(name, { child, http: false });
    child.once('exit', () => this.children.delete(name));
    return child;
  }

  list(): BenchProcess[] {
    return [...this.children].flatMap(([name, { child, http }]) => (child.pid === undefined ? [] : [{ name, pid: child.pid, http }]));
  }

  private stopping = false;

  async stop(names?: string[]): Promise<void> {
    const all = names === undefined;
    if (all) this.stopping = true;
    const targets = [...this.children].filter(([name]) => all || names.includes(name));
    for (const [name] of targets) this.children.delete(name);
    await Promise.all(
      targets.map(([, { child }]) => {
        if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        return exited.finally(() => clearTimeout(kill));
      }),
    );
  }
}

function run(script: string, env: Record<string, string | undefined>, logDir: string, name: string): Promise<void> {
  const log = openSync(join(logDir, `${name}.log`), 'a');
  const child = spawn(process.execPath, [script], { env, cwd: ROOT, stdio: ['ignore', log, log] });
  closeSync(log);
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${name} failed (exit ${code}); see ${logDir}/${name}.log`)))),
  );
}

const databaseName = (databaseUrl: string) => decodeURIComponent(new URL(databaseUrl).pathname.slice(1));

const SCHEMA_NAMED = /\b(identity|conversation|notification|webhooks)\./;
const SCHEMAS_NAMED = /\b(identity|conversation|notification|webhooks)\./g;

/**
 * The harness's pool over a database per service: each statement goes to the database of the
 * schema it names (identity's when it names none), and a client checked out for a transaction
 * connects to a database at its first statement that names a schema (its BEGIN waits for that).
 * Every statement and transaction of the harness touches one service's schema, as the services'
 * own do.
 */
function schemaRoutedPool(pools: Record<DatabaseService, pg.Pool>): pg.Pool {
  const route = (text: string) => {
    const schemas = new Set([...text.matchAll(SCHEMAS_NAMED)].map((match) => match[1]));
    if (schemas.size > 1) throw new Error(`a statement names several services' schemas, which live in separate databases: ${text.slice(0, 200)}`);
    return pools[([...schemas][0] ?? 'identity') as DatabaseService];
  };
  const textOf = (query: string | { text: string }) => (typeof query === 'string' ? query : query.text);
  const connect = async () => {
    let bound: pg.PoolClient | null = null;
    const waiting: string[] = [];
    return {
      async query(query: string | { text: string }, ...rest: unknown[]) {
        const text = textOf(query);
        if (!bound) {
          if (!SCHEMA_NAMED.test(text) && /^\s*(BEGIN|START TRANSACTION)\b/i.test(text)) {
            waiting.push(text);
            return { rows: [], rowCount: 0 };
          }
          if (!SCHEMA_NAMED.test(text) && /^\s*(COMMIT|ROLLBACK)\b/i.test(text) && waiting.length > 0) {
            waiting.length = 0;
            return { rows: [], rowCount: 0 };
          }
          bound = await route(text).connect();
          for (const statement of waiting.splice(0)) await bound.query(statement);
        }
        return (bound.query as (...args: unknown[]) => Promise<unknown>)(query, ...rest);
      },
      release(error?: Error | boolean) {
        bound?.release(error);
      },
    } as unknown as pg.PoolClient;
  };
  return new Proxy(pools.identity, {
    get(target, property, receiver) {
      if (property === 'query')
        return (query: string | { text: string }, ...rest: unknown[]) =>
          (route(textOf(query)).query as (...args: unknown[]) => Promise<unknown>)(query, ...rest);
      if (property === 'connect') return connect;
      if (property === 'end') return async () => void (await Promise.all(Object.values(pools).map((each) => each.end())));
      return Reflect.get(target, property, receiver);
    },
  });
}

function pool(databaseUrl: string, size: number): pg.Pool {
  // Idle connections close after a second: the raw-SQL loads open up to BENCH_CONNECTIONS, which
  // must not stay counted against max_connections while the services are measured.
  // The services' client, so that the raw-SQL loads send their statements as the services do.
  const sql = new pg.Pool({ connectionString: databaseUrl, max: size, idleTimeoutMillis: 1000, Client: ServiceClient });
  sql.on('error', () => undefined);
  return sql;
}

export interface OwnSystemOptions {
  /** Any URL of the PostgreSQL server; the database name is replaced by `database`. */
  postgresUrl: string;
  database: string;
  redisUrl: string;
  logLevel: string;
  /** Connections of the harness's own pool (seeding and baselines). */
  poolSize: number;
  /** Processes to run under `node --cpu-prof`, and where their profiles go. */
  cpuProfile: { dir: string; processes: string[] } | null;
  /** Each service in a database of its own, `<database>_<service>` (<SERVICE>_DATABASE_URL). */
  databasePerService: boolean;
}

/** Starts the whole system from the build, as `npm start` does, on free ports. */
export async function startOwnSystem(options: OwnSystemOptions): Promise<System> {
  const databaseUrl = new URL(options.postgresUrl);
  databaseUrl.pathname = `/${options.database}`;
  const logDir = mkdtempSync(join(tmpdir(), 'collab-bench-'));
  const flags = (name: string) =>
    options.cpuProfile?.processes.includes(name)
      ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfile.dir}`, `--cpu-prof-name=${name}.cpuprofile`]
      : [];
  const children = new Processes(logDir, flags);
  const customer = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
  const [identityPort, conversationPort, notificationPort, webhooksPort, mailPort, gatewayPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  // Nothing of a developer's own `npm start` configuration may leak in (service URLs, ports).
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/_(URL|PORT)$|^PORT$|^REDIS_PREFIX$/.test(name)));
  const env: Record<string, string | undefined> = {
    ...inherited,
    DATABASE_URL: databaseUrl.toString(),
    REDIS_URL: options.redisUrl,
    REDIS_PREFIX: `bench-${randomBytes(4).toString('hex')}`,
    ...Object.fromEntries(catalog.DEV_SECRET_NAMES.map((name) => [name, randomBytes(32).toString('hex')])),
    CUSTOMER_ID: customer.id,
    CUSTOMER_SECRET: customer.secret,
    LOG_LEVEL: options.logLevel,
    // No /metrics listeners (they would need a free port per process); requests are still recorded.
    METRICS_PORT: '0',
    IDENTITY_PORT: String(identityPort),
    CONVERSATION_PORT: String(conversationPort),
    NOTIFICATION_PORT: String(notificationPort),
    WEBHOOKS_PORT: String(webhooksPort),
    MAIL_PORT: String(mailPort),
    PORT: String(gatewayPort),
    // The webhooks scenario's receivers listen on loopback, which the outbound guard refuses to
    // post to unless its range is exempted. Only this harness's system exempts it.
    OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
  };

  const services = Object.keys(SERVICE_DATABASE_VARS) as DatabaseService[];
  const serviceUrl = (service: DatabaseService) => {
    const url = new URL(databaseUrl);
    url.pathname = `/${options.database}_${service}`;
    return url.toString();
  };
  if (options.databasePerService) for (const service of services) env[SERVICE_DATABASE_VARS[service]] = serviceUrl(service);
  const urls = options.databasePerService ? services.map(serviceUrl) : [env.DATABASE_URL!];
  for (const each of urls) {
    await dropDatabase(each, databaseName(each));
    await ensureDatabase(each);
  }
  for (const step of catalog.MIGRATIONS) await run(step.script, env, logDir, step.name);
  const entries = catalog.processes(env);
  for (const entry of entries) children.start(entry.name, entry.script, { ...env, ...entry.env }, !entry.name.endsWith('-worker'));
  const url = `http://127.0.0.1:${gatewayPort}`;
  const sql = options.databasePerService
    ? schemaRoutedPool(Object.fromEntries(services.map((service) => [service, pool(serviceUrl(service), options.poolSize)])) as Record<DatabaseService, pg.Pool>)
    : pool(env.DATABASE_URL!, options.poolSize);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await children.stop();
    await sql.end();
    for (const each of urls) await dropDatabase(each, databaseName(each));
    await deleteRedisPrefix(options.redisUrl, env.REDIS_PREFIX!);
  };
  try {
    // The gateway is ready once every service answers its /readyz.
    await ready(url);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}; logs in ${logDir}`, { cause: error });
  }

  const conversation = entries.find((entry) => entry.name === 'conversation')!;
  const gateway = entries.find((entry) => entry.name === 'gateway')!;
  return {
    url,
    customer,
    sql,
    databaseUrl: options.databasePerService ? serviceUrl('identity') : env.DATABASE_URL!,
    databaseNames: urls.map((each) => databaseName(each)),
    direct: {
      identity: `http://127.0.0.1:${identityPort}`,
      conversation: `http://127.0.0.1:${conversationPort}`,
      internalToken: env.INTERNAL_TOKEN!,
    },
    webhooks: `http://127.0.0.1:${webhooksPort}`,
    processes: () => children.list(),
    logDir,
    stop,
    async scaleOut() {
      const [replicaPort, balancerPort, gateway2Port] = await Promise.all([freePort(), freePort(), freePort()]);
      const names = ['conversation-2', 'balancer', 'gateway-2'];
      children.start(names[0], conversation.script, { ...env, ...conversation.env, PORT: String(replicaPort) }, true);
      const balancer = children.fork(names[1], join(dirname(fileURLToPath(import.meta.url)), 'balancer.js'), [String(balancerPort)]);
      const balancerSays = (expected: string) =>
        new Promise<void>((resolve) => balancer.on('message', (message) => message === expected && resolve()));
      await balancerSays('listening');
      const setBackends = async (ports: number[]) => {
        const updated = balancerSays('updated');
        balancer.send({ backends: ports });
        await updated;
      };
      await setBackends([conversationPort]);
      const balancerUrl = `http://127.0.0.1:${balancerPort}`;
      children.start(names[2], gateway.script, { ...env, ...gateway.env, PORT: String(gateway2Port), CONVERSATION_URL: balancerUrl }, true);
      const url2 = `http://127.0.0.1:${gateway2Port}`;
      await Promise.all([ready(url2), ready(`http://127.0.0.1:${replicaPort}`)]);
      return {
        url: url2,
        replicas: (count) => setBackends(count === 1 ? [conversationPort] : [conversationPort, replicaPort]),
        stop: () => children.stop(names),
      };
    },
  };
}

/** A system someone else runs: only the gateway, the customer and the database are known. */
export function useRunningSystem(options: {
  url: string;
  customer: { id: string; secret: string };
  databaseUrl: string;
  poolSize: number;
  direct: System['direct'];
}): System {
  const sql = pool(options.databaseUrl, options.poolSize);
  return {
    url: options.url.replace(/\/$/, ''),
    customer: options.customer,
    sql,
    databaseUrl: options.databaseUrl,
    databaseNames: [databaseName(options.databaseUrl)],
    direct: options.direct,
    webhooks: null,
    processes: () => [],
    scaleOut: null,
    logDir: null,
    stop: () => sql.end(),
  };
}
