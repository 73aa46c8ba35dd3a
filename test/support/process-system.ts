/**
 * The whole system as real processes, the way `npm start` runs it: scripts/start.mjs, in a process
 * group of its own, migrates its own database, then supervises every service and worker of
 * scripts/processes.mjs on free ports (public, internal and /metrics), with its own Redis prefix
 * and secrets. test/system/start.test.ts checks the supervisor itself; startProcessSystem hands
 * the running system to a test in the shape of startSystem's in-process one (test/load).
 * Both need the build (the supervisor runs services/<name>/dist).
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { deleteRedisPrefix, dropDatabase, freePortBase, freePorts } from '@collab/shared/devkit';
import { childrenOf, commandLine, descendants, listeningPorts } from './proc.js';
import { killDetached, pollUntil, spawnDetached, within, type DetachedProcess } from './processes.js';
import { databaseUrlFor, type TestSystem } from './system.js';

const ROOT = join(import.meta.dirname, '..', '..');

interface CatalogEntry {
  name: string;
  /** Absolute path of the entry point the supervisor runs with node. */
  script: string;
  env: Record<string, string>;
}

/** What `npm start` runs (scripts/processes.mjs), read from the script itself so the two never differ. */
const catalog = (await import(join(ROOT, 'scripts', 'processes.mjs'))) as {
  DEV_SECRET_NAMES: string[];
  processes(env: NodeJS.ProcessEnv): CatalogEntry[];
};

/** Every secret the supervisor would otherwise take from (or write to) .data/dev-secrets.json. */
export const DEV_SECRET_NAMES = catalog.DEV_SECRET_NAMES;

const redisUrl = () => process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const DATABASE_NAME = /^collab_test_start_[0-9a-f]+$/;

const createdDatabases = new Set<string>();
const usedRedisPrefixes = new Set<string>();

/** A database name of this module's own form, removed by cleanUpStarted unless dropped before. */
export function newDatabaseName(): string {
  const name = `collab_test_start_${randomBytes(6).toString('hex')}`;
  createdDatabases.add(name);
  return name;
}

/** Drops a database that newDatabaseName named (and no other). */
export async function dropStartedDatabase(name: string): Promise<void> {
  if (!DATABASE_NAME.test(name)) throw new Error(`refusing to drop ${name}`);
  await dropDatabase(databaseUrlFor('postgres'), name);
  createdDatabases.delete(name);
}

function newRedisPrefix(): string {
  const prefix = `test-start-${randomBytes(6).toString('hex')}`;
  usedRedisPrefixes.add(prefix);
  return prefix;
}

/**
 * The /metrics port offsets of the supervised processes: each listens on METRICS_PORT_BASE plus
 * its own offset (scripts/processes.mjs), so a base of 0 gives the offsets themselves.
 */
function metricsPortOffsets(): number[] {
  return catalog.processes({ METRICS_PORT_BASE: '0' }).map((entry) => Number(entry.env.METRICS_PORT));
}

export interface ServicePorts {
  gateway: number;
  identity: number;
  conversation: number;
  notification: number;
  webhooks: number;
  mail: number;
}

/**
 * The environment `npm start` gets: this process's, with its own database, Redis prefix, secrets
 * and free ports (the metrics ports too, unless `extra` sets METRICS_PORT=0), and none of the
 * developer's customer or service URLs unless `extra` sets them. `own` is what this system set.
 */
export async function supervisorEnv(
  databaseName: string,
  extra: Record<string, string> = {},
): Promise<{ env: NodeJS.ProcessEnv; own: Record<string, string>; ports: ServicePorts }> {
  const [gateway, identity, conversation, notification, webhooks, mail] = await freePorts(6);
  // All set (INTERNAL_TOKEN, ACCESS_TOKEN_SECRET, …), so the supervisor never touches .data.
  const secrets = Object.fromEntries(DEV_SECRET_NAMES.map((name) => [name, randomBytes(32).toString('hex')]));
  const metrics: Record<string, string> =
    extra.METRICS_PORT === '0' ? {} : { METRICS_PORT_BASE: String(await freePortBase(metricsPortOffsets())) };
  const own: Record<string, string> = {
    DATABASE_URL: databaseUrlFor(databaseName),
    REDIS_URL: redisUrl(),
    REDIS_PREFIX: newRedisPrefix(),
    ...secrets,
    PORT: String(gateway),
    IDENTITY_PORT: String(identity),
    CONVERSATION_PORT: String(conversation),
    NOTIFICATION_PORT: String(notification),
    WEBHOOKS_PORT: String(webhooks),
    MAIL_PORT: String(mail),
    ...metrics,
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    ...extra,
  };
  // The test runner's own variables (VITEST_*, and the NODE_ENV=test it sets) are not what
  // `npm start` gets: Express and other libraries read NODE_ENV.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name, value]) => !name.startsWith('VITEST') && !(name === 'NODE_ENV' && value === 'test')),
  );
  const env: NodeJS.ProcessEnv = { ...inherited, ...own };
  const inheritedOnlyIfGiven = ['CUSTOMER_ID', 'CUSTOMER_SECRET', 'IDENTITY_URL', 'CONVERSATION_URL', 'NOTIFICATION_URL', 'WEBHOOKS_URL', 'MAIL_URL', 'METRICS_PORT'];
  for (const name of inheritedOnlyIfGiven) if (!(name in extra)) delete env[name];
  return { env, own, ports: { gateway, identity, conversation, notification, webhooks, mail } };
}

export interface StartedSystem {
  supervisor: DetachedProcess;
  url: string;
  ports: ServicePorts;
  databaseName: string;
  env: NodeJS.ProcessEnv;
  /** The variables supervisorEnv set for this system. */
  own: Record<string, string>;
}

/** Kills what is left of a supervisor's process group, and removes its database and Redis keys. */
async function tearDown(supervisor: DetachedProcess, databaseName: string, prefix: string): Promise<void> {
  if (supervisor.child.pid !== undefined && !supervisor.isClosed()) {
    try {
      process.kill(-supervisor.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await within('a killed process group to end', 10_000, supervisor.closed).catch(() => undefined);
  }
  await dropStartedDatabase(databaseName).catch(() => undefined);
  await deleteRedisPrefix(redisUrl(), prefix).catch(() => undefined);
  usedRedisPrefixes.delete(prefix);
}

/**
 * Starts the system with `node scripts/start.mjs`, or with `npm start` (the supervisor is then
 * npm's child), and resolves once its gateway's /readyz answers 200 (every service ready).
 * `npm start` builds first, and the machine may be shared: `readyTimeoutMs` is a generous bound
 * against a hang, not an expectation.
 */
export async function startSupervisor(extra: Record<string, string> = {}, how: 'node' | 'npm' = 'node', readyTimeoutMs = 60_000): Promise<StartedSystem> {
  const databaseName = newDatabaseName();
  const { env, own, ports } = await supervisorEnv(databaseName, extra);
  const supervisor = how === 'npm' ? spawnDetached('npm', ['start'], env) : spawnDetached(process.execPath, ['scripts/start.mjs'], env);
  const url = `http://127.0.0.1:${ports.gateway}`;
  try {
    await pollUntil(
      'GET /readyz on the gateway to answer 200',
      readyTimeoutMs,
      async () => {
        if (supervisor.child.exitCode !== null || supervisor.child.signalCode !== null)
          throw new Error(`the supervisor exited early (${supervisor.child.exitCode ?? supervisor.child.signalCode})${supervisor.dump()}`);
        try {
          const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
          await response.arrayBuffer();
          // Ours, not another system's that took the port while `npm start` was still building.
          const ours = listeningPorts(descendants(supervisor.child.pid!)).includes(ports.gateway);
          return response.status === 200 && ours ? true : undefined;
        } catch {
          return undefined;
        }
      },
      supervisor.dump,
    );
  } catch (error) {
    await tearDown(supervisor, databaseName, own.REDIS_PREFIX);
    throw error;
  }
  return { supervisor, url, ports, databaseName, env, own };
}

/** SIGTERM to the supervisor only; it must stop its children itself. Resolves with its exit. */
export async function stopSupervisor(system: StartedSystem) {
  const { supervisor } = system;
  supervisor.child.kill('SIGTERM');
  const exit = await within('the supervisor to exit after SIGTERM', 30_000, supervisor.exited, supervisor.dump);
  // The pipes close only when every process that inherited them (all services) has ended.
  await within('every supervised process to end', 30_000, supervisor.closed, supervisor.dump);
  return exit;
}

/**
 * For afterAll: whatever happened, no supervised process outlives the tests, and no database or
 * Redis key of theirs stays behind.
 */
export async function cleanUpStarted(): Promise<void> {
  await killDetached();
  for (const name of [...createdDatabases]) await dropStartedDatabase(name);
  for (const prefix of [...usedRedisPrefixes]) {
    await deleteRedisPrefix(redisUrl(), prefix);
    usedRedisPrefixes.delete(prefix);
  }
}

/** One supervised process as it runs now. */
export interface SystemProcess {
  /** Its name in scripts/processes.mjs (`gateway`, `identity-worker`, …). */
  name: string;
  pid: number;
  /** Its Prometheus endpoint, or null when metrics are off. */
  metricsUrl: string | null;
}

export interface ProcessSystem extends TestSystem {
  supervisor: DetachedProcess;
  /**
   * The supervised processes running now, found anew among the supervisor's children on each
   * call (a process the supervisor restarted has a new pid; one between crash and restart is missing).
   */
  processes(): SystemProcess[];
  /** The supervisor's lines about a process that ended while running (and was restarted), so far. */
  exits(): string[];
}

const execFileAsync = promisify(execFile);

/**
 * Starts the system as `npm start` runs it, with CUSTOMER_ID/CUSTOMER_SECRET set (the customer
 * identity ensures at boot: `customer`, else a new one), and resolves once every supervised process runs and answers on its
 * /metrics port. `env` adds or overrides variables of every process. stop() sends SIGTERM to the
 * supervisor, removes the database and Redis keys, and throws when the processes did not stop cleanly.
 */
export async function startProcessSystem(
  options: { env?: Record<string, string>; customer?: { id: string; secret: string }; readyTimeoutMs?: number } = {},
): Promise<ProcessSystem> {
  const customer = options.customer ?? { id: randomUUID(), secret: randomBytes(32).toString('hex') };
  const readyTimeoutMs = options.readyTimeoutMs ?? 60_000;
  const started = await startSupervisor({ CUSTOMER_ID: customer.id, CUSTOMER_SECRET: customer.secret, ...options.env }, 'node', readyTimeoutMs);
  const { supervisor, own, ports } = started;
  const entries = catalog.processes(started.env);
  const byScript = new Map(entries.map((entry) => [entry.script, entry]));
  // The supervisor runs each entry point as `node <absolute script path>`.
  const processes = (): SystemProcess[] =>
    childrenOf(supervisor.child.pid!).flatMap((pid) => {
      const entry = byScript.get(commandLine(pid)?.[1] ?? '');
      if (!entry) return [];
      const port = entry.env.METRICS_PORT;
      return [{ name: entry.name, pid, metricsUrl: port === '0' ? null : `http://127.0.0.1:${port}/metrics` }];
    });
  try {
    // /readyz covers the HTTP services only: the workers are waited for here.
    await pollUntil(
      'every supervised process to run and serve /metrics',
      readyTimeoutMs / 2,
      async () => {
        const running = processes();
        if (running.length < entries.length) return undefined;
        for (const { metricsUrl } of running) {
          if (!metricsUrl) continue;
          const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(2000) }).catch(() => null);
          await response?.arrayBuffer();
          if (response?.status !== 200) return undefined;
        }
        return true;
      },
      () => ` (running: ${processes().map((found) => found.name).join(', ')})${supervisor.dump()}`,
    );
  } catch (error) {
    await tearDown(supervisor, started.databaseName, own.REDIS_PREFIX);
    throw error;
  }

  const sql = new pg.Pool({ connectionString: own.DATABASE_URL, max: 2 });
  // DROP DATABASE … WITH (FORCE) at stop() may terminate an idle connection the pool still holds.
  sql.on('error', () => undefined);
  const url = (port: number) => `http://127.0.0.1:${port}`;
  let stopped = false;

  return {
    url: started.url,
    customer,
    env: own,
    sql,
    serviceUrls: {
      identity: url(ports.identity),
      conversation: url(ports.conversation),
      notification: url(ports.notification),
      webhooks: url(ports.webhooks),
      mail: url(ports.mail),
    },
    supervisor,
    processes,
    exits: () => supervisor.output.stdout.match(/^\[supervisor\] \S+ exited .*; restarting in .*$/gm) ?? [],
    /** As an operator adds one to a running system: identity's CLI with the system's database and key. */
    async addCustomer() {
      const { stdout } = await execFileAsync(process.execPath, [join(ROOT, 'services', 'identity', 'dist', 'cli', 'customer.js'), 'create'], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: own.DATABASE_URL, SECRETS_ENCRYPTION_KEY: own.SECRETS_ENCRYPTION_KEY, LOG_LEVEL: 'warn' },
      });
      const id = /^CUSTOMER_ID=(\S+)$/m.exec(stdout)?.[1];
      const secret = /^CUSTOMER_SECRET=(\S+)$/m.exec(stdout)?.[1];
      if (!id || !secret) throw new Error(`customer create printed no customer: ${stdout}`);
      return { id, secret };
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      let exit: Awaited<ReturnType<typeof stopSupervisor>>;
      try {
        exit = await stopSupervisor(started);
      } finally {
        await sql.end();
        await tearDown(supervisor, started.databaseName, own.REDIS_PREFIX);
      }
      if (exit.code !== 0) throw new Error(`the supervised processes did not stop cleanly (exit ${exit.signal ?? exit.code})${supervisor.dump()}`);
    },
  };
}
