/**
 * The chaos run's own PostgreSQL cluster and redis-server, on free loopback ports, so that crashing
 * them never touches the shared servers (5432, 6379). Both are removed at the end, also when the
 * run fails or is interrupted (SIGINT, SIGTERM), and a cluster left by a run that was killed
 * outright is removed by the next one.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { freePort } from '@collab/shared/devkit';
import pg from 'pg';
import { pollUntil } from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';

/** The clusters this harness creates: `chaos<pid of the run>`. */
const CLUSTER_NAME = /^chaos(\d+)$/;

export interface OwnPostgres {
  version: string;
  name: string;
  port: number;
  /** The cluster's `postgres` database; the system under test creates its own beside it. */
  url: string;
  /** A crash: `pg_ctlcluster … stop -m immediate` (the postmaster and every backend end at once, no checkpoint). */
  crash(): void;
  /** Starts it again (crash recovery replays the WAL) and resolves once it accepts connections. */
  start(): Promise<void>;
  drop(): void;
}

const run = (command: string, args: string[]) => execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });

function installedVersion(): string {
  const versions = readdirSync('/usr/lib/postgresql').filter((entry) => /^\d+$/.test(entry));
  if (versions.length === 0) throw new Error('no PostgreSQL server under /usr/lib/postgresql (pg_createcluster needs one)');
  return versions.sort((a, b) => Number(b) - Number(a))[0];
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Drops the chaos clusters whose run no longer exists (a run killed with SIGKILL cleans up nothing). */
function dropOrphans(version: string): void {
  for (const line of run('pg_lsclusters', ['--no-header']).split('\n')) {
    const [clusterVersion, name] = line.trim().split(/\s+/);
    const pid = CLUSTER_NAME.exec(name ?? '')?.[1];
    if (clusterVersion === version && pid && !isRunning(Number(pid))) run('pg_dropcluster', ['--stop', version, name]);
  }
}

async function accepting(url: string): Promise<true | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function createOwnPostgres(): Promise<OwnPostgres> {
  const version = installedVersion();
  dropOrphans(version);
  const name = `chaos${process.pid}`;
  const port = await freePort();
  // Listens on localhost only (the packaged default); trust auth; enough connections for every
  // process's pool and the harness.
  run('pg_createcluster', [version, name, '--port', String(port), '-o', 'max_connections=300', '--', '--auth=trust']);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const ctl = (...args: string[]) => run('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, ...args]);
  let dropped = false;
  const own: OwnPostgres = {
    version,
    name,
    port,
    url,
    crash: () => void ctl('stop', '-m', 'immediate'),
    async start() {
      ctl('start');
      await pollUntil(`PostgreSQL cluster ${name} to accept connections`, 60_000, () => accepting(url));
    },
    drop() {
      if (dropped) return;
      dropped = true;
      run('pg_dropcluster', ['--stop', version, name]);
    },
  };
  try {
    await own.start();
  } catch (error) {
    own.drop();
    throw error;
  }
  return own;
}

export interface OwnServers {
  postgres: OwnPostgres;
  redis: PrivateRedis;
  /** Stops redis-server and drops the cluster; safe to call more than once. */
  remove(): Promise<void>;
}

/**
 * Starts both, and removes them when this process is interrupted or exits before remove() ran
 * (synchronously then: an exiting process runs no more promises).
 */
export async function startOwnServers(): Promise<OwnServers> {
  const postgres = await createOwnPostgres();
  let redis: PrivateRedis;
  try {
    redis = await startPrivateRedis();
  } catch (error) {
    postgres.drop();
    throw error;
  }
  const removeNow = () => {
    try {
      postgres.drop();
    } catch {
      // already gone
    }
    void redis.stop('SIGKILL');
  };
  const interrupted = (signal: NodeJS.Signals) => {
    console.error(`chaos: ${signal}: removing the cluster ${postgres.name} and redis-server on port ${redis.port}`);
    removeNow();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  process.once('exit', removeNow);
  return {
    postgres,
    redis,
    async remove() {
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      process.off('exit', removeNow);
      await redis.stop('SIGTERM');
      postgres.drop();
    },
  };
}
