/**
 * `npm start` as an operator runs it: scripts/start.mjs as a real process that migrates its own
 * database and supervises identity, conversation, notification and the gateway as separate node
 * processes on free ports, then stops them all on SIGTERM, also when the signal goes to the npm
 * process that `npm start` is.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEncryptionKey, SecretBox } from '@collab/shared';
import { freePort } from '@collab/shared/devkit';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from '../support/client.js';
import { descendants, listeningPorts, running } from '../support/proc.js';
import {
  cleanUpStarted,
  DEV_SECRET_NAMES,
  dropStartedDatabase,
  newDatabaseName,
  startSupervisor,
  stopSupervisor,
  supervisorEnv,
  type StartedSystem,
} from '../support/process-system.js';
import { pollUntil, spawnDetached, within } from '../support/processes.js';
import { databaseUrlFor, migrateAll } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DEV_SECRETS_FILE = join(ROOT, '.data', 'dev-secrets.json');

// ---------------------------------------------------------------------------------------------
// Helpers

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrlFor('postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function createDatabase(name: string): Promise<void> {
  await withAdmin((client) => client.query(`CREATE DATABASE "${name}"`));
}

/** The developer's dev-secrets file as it is now (null when absent): a test run must not change it. */
function devSecretsSnapshot(): string | null {
  return existsSync(DEV_SECRETS_FILE) ? readFileSync(DEV_SECRETS_FILE, 'utf8') : null;
}

async function databaseExists(name: string): Promise<boolean> {
  return withAdmin(async (client) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(true); // not refused: something holds the port
    });
    socket.once('error', () => resolve(false));
  });
}

/** Spawns `node <args>` at the repository root in its own process group, capturing its output. */
function spawnNode(args: string[], env: NodeJS.ProcessEnv) {
  return spawnDetached(process.execPath, args, env);
}

/** The printed customer can manage applications, and an application's server token works. */
async function expectWorkingCustomer(url: string, customer: { id: string; secret: string }) {
  const created = await request(url, 'POST', '/v1/applications', {
    token: await customerToken(customer.id, customer.secret),
    body: { name: 'start test' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  expect(created.body).toMatchObject({ success: true, message: 'Application created' });
  const { applicationID, secret } = created.body as { applicationID: string; secret: string };
  expect(applicationID).toMatch(UUID);

  const token = await serverToken(applicationID, secret);
  const put = await request(url, 'PUT', '/v1/users/start-user', { token, body: { name: 'Start User', email: 'start@example.com' } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  expect(put.body).toEqual({ success: true, message: 'You successfully created user start-user' });
  const get = await request(url, 'GET', '/v1/users/start-user', { token });
  expect(get.status, JSON.stringify(get.body)).toBe(200);
  expect(get.body).toMatchObject({ id: 'start-user', name: 'Start User', email: 'start@example.com' });

  // A token signed with another secret is refused: the customer check is real.
  const wrong = await request(url, 'GET', '/v1/applications', { token: await customerToken(customer.id, randomBytes(32).toString('hex')) });
  expect(wrong.status).toBe(401);
}

async function expectAllPortsClosed(system: StartedSystem) {
  for (const [name, port] of Object.entries(system.ports)) {
    expect(await accepts(port), `${name} port ${port} still accepts connections`).toBe(false);
  }
}

function countMatches(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].length;
}

// ---------------------------------------------------------------------------------------------

// Whatever happened, no process of ours outlives the tests, and no database stays behind.
afterAll(cleanUpStarted, 60_000);

describe('npm start (scripts/start.mjs)', () => {
  it('migrates, prints the first customer once, serves through the gateway and stops cleanly on SIGTERM', async () => {
    const devSecrets = devSecretsSnapshot();
    // The test systems set every one of these, so the supervisor never reads or writes .data.
    expect(DEV_SECRET_NAMES).toEqual(expect.arrayContaining(['INTERNAL_TOKEN', 'ACCESS_TOKEN_SECRET']));
    const system = await startSupervisor();
    // Identity prints before it listens, so the lines are there once the gateway is ready; poll
    // only for this process to have read them from the pipe.
    await pollUntil(
      'the customer to be printed',
      5_000,
      () => (/CUSTOMER_SECRET=\S+\n/.test(system.supervisor.output.stdout) ? true : undefined),
      system.supervisor.dump,
    );
    // Said once the gateway answers, so that a reader knows when to make the first call.
    await pollUntil(
      'the supervisor to say it is ready',
      5_000,
      () => (system.supervisor.output.stdout.includes(`[supervisor] ready: http://localhost:${system.ports.gateway} answers`) ? true : undefined),
      system.supervisor.dump,
    );
    const { stdout } = system.supervisor.output;

    const idMatches = [...stdout.matchAll(/CUSTOMER_ID=(\S+)/g)];
    const secretMatches = [...stdout.matchAll(/CUSTOMER_SECRET=(\S+)/g)];
    expect(idMatches.length, system.supervisor.dump()).toBe(1);
    expect(secretMatches.length, system.supervisor.dump()).toBe(1);
    const customer = { id: idMatches[0][1], secret: secretMatches[0][1] };
    expect(customer.id).toMatch(UUID);
    expect(customer.secret).toMatch(/^[0-9a-f]{64}$/);

    // Its own database, never `collab`; the printed customer is the one stored there.
    const sql = new pg.Client({ connectionString: databaseUrlFor(system.databaseName) });
    await sql.connect();
    try {
      // Stored encrypted only (the secret itself is proven by expectWorkingCustomer below).
      const rows = await sql.query(
        'SELECT id::text AS id, plaintext_secret, secret_encrypted IS NOT NULL AS encrypted FROM identity.customers',
      );
      expect(rows.rows).toEqual([{ id: customer.id, plaintext_secret: null, encrypted: true }]);
    } finally {
      await sql.end();
    }

    await expectWorkingCustomer(system.url, customer);

    const exit = await stopSupervisor(system);
    expect(exit, system.supervisor.dump()).toEqual({ code: 0, signal: null });
    await expectAllPortsClosed(system);
    // Printed once in the whole run, not once per process start.
    expect(countMatches(system.supervisor.output.stdout, /CUSTOMER_ID=/g)).toBe(1);
    expect(system.supervisor.output.stdout).toContain('[supervisor] all processes stopped');
    expect(devSecretsSnapshot(), '.data/dev-secrets.json was written').toBe(devSecrets);

    await dropStartedDatabase(system.databaseName);
    expect(await databaseExists(system.databaseName)).toBe(false);
  }, 120_000);

  it('with CUSTOMER_ID and CUSTOMER_SECRET set, prints no customer and that customer works', async () => {
    const devSecrets = devSecretsSnapshot();
    const customer = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
    const system = await startSupervisor({ CUSTOMER_ID: customer.id, CUSTOMER_SECRET: customer.secret });

    await expectWorkingCustomer(system.url, customer);

    const exit = await stopSupervisor(system);
    expect(exit, system.supervisor.dump()).toEqual({ code: 0, signal: null });
    await expectAllPortsClosed(system);
    // All output is in: every writer of the pipe has ended.
    expect(system.supervisor.output.stdout).not.toContain('CUSTOMER_ID=');
    expect(system.supervisor.output.stdout).not.toContain('CUSTOMER_SECRET=');
    expect(system.supervisor.output.stdout + system.supervisor.output.stderr).not.toContain(customer.secret);
    expect(devSecretsSnapshot(), '.data/dev-secrets.json was written').toBe(devSecrets);

    await dropStartedDatabase(system.databaseName);
  }, 120_000);

  it('started with `npm start`, stops everything when the npm process gets SIGTERM', async () => {
    // No /metrics ports: nothing shared with other runs; the processes are found by their pids.
    const shutdownTimeoutMs = 10_000;
    const system = await startSupervisor({ METRICS_PORT: '0', SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) }, 'npm');
    const npm = system.supervisor.child.pid!;
    const pids = descendants(npm);
    // The supervisor and its seven processes (four services, three workers), whatever runs between.
    expect(pids.length, system.supervisor.dump()).toBeGreaterThanOrEqual(8);
    const ports = listeningPorts(pids);
    expect(ports.sort()).toEqual(expect.arrayContaining(Object.values(system.ports)));

    // To npm alone, as a process manager or `kill <pid>` sends it; not to its process group.
    process.kill(npm, 'SIGTERM');
    await within('npm to exit after SIGTERM', shutdownTimeoutMs + 10_000, system.supervisor.exited, system.supervisor.dump);
    await pollUntil(
      'every process started by npm to end',
      shutdownTimeoutMs + 10_000,
      () => (pids.some(running) ? undefined : true),
      () => ` (still running: ${pids.filter(running).join(', ')})${system.supervisor.dump()}`,
    );
    for (const port of ports) expect(await accepts(port), `port ${port} still accepts connections`).toBe(false);
    expect(system.supervisor.output.stdout).toContain('[supervisor] all processes stopped');

    await dropStartedDatabase(system.databaseName);
  }, 120_000);

  it('stops on SIGTERM while the migrations run, without starting the services', async () => {
    const databaseName = newDatabaseName();
    // Created beforehand: a CREATE DATABASE cut off by the signal could still complete on the
    // server after this test dropped the database, and leave it behind.
    await createDatabase(databaseName);
    const { env, ports } = await supervisorEnv(databaseName);
    const supervisor = spawnNode(['scripts/start.mjs'], env);
    await pollUntil(
      'the supervisor to start the first migration',
      30_000,
      () => (/\[supervisor\] running \S+-migrate/.test(supervisor.output.stdout) ? true : undefined),
      supervisor.dump,
    );
    supervisor.child.kill('SIGTERM');
    const exit = await within('the supervisor to exit after SIGTERM', 30_000, supervisor.exited, supervisor.dump);
    await within('every process to end', 30_000, supervisor.closed, supervisor.dump);
    expect(exit, supervisor.dump()).toEqual({ code: 0, signal: null });
    expect(await accepts(ports.gateway)).toBe(false);
    await dropStartedDatabase(databaseName);
  }, 90_000);

  it('with no PostgreSQL where DATABASE_URL points, says so and which setting to change, and starts nothing', async () => {
    const nothing = await freePort();
    const { env, ports } = await supervisorEnv(newDatabaseName(), { DATABASE_URL: `postgres://postgres@127.0.0.1:${nothing}/collab` });
    const supervisor = spawnNode(['scripts/start.mjs'], env);
    const exit = await within('the supervisor to exit', 30_000, supervisor.exited, supervisor.dump);
    await within('every process to end', 30_000, supervisor.closed, supervisor.dump);
    expect(exit, supervisor.dump()).toEqual({ code: 1, signal: null });
    expect(supervisor.output.stderr).toContain(`no PostgreSQL answers at 127.0.0.1:${nothing} (connect ECONNREFUSED 127.0.0.1:${nothing}): start it there, or set DATABASE_URL to yours`);
    // A setting to change, not a crash: no stack trace.
    expect(supervisor.output.stderr).not.toMatch(/^\s+at /m);
    expect(supervisor.output.stdout).toContain('[supervisor] identity-migrate failed (exit 1); not starting.');
    expect(await accepts(ports.gateway)).toBe(false);
  }, 60_000);

  it('with no Redis where REDIS_URL points, says after READY_NOTICE_SECONDS what the system still waits for', async () => {
    const databaseName = newDatabaseName();
    const nothing = await freePort();
    // A minute by default: 3 s here, so that the test does not wait for it.
    const { env } = await supervisorEnv(databaseName, { REDIS_URL: `redis://127.0.0.1:${nothing}`, READY_NOTICE_SECONDS: '3' });
    const supervisor = spawnNode(['scripts/start.mjs'], env);
    try {
      await pollUntil(
        'the supervisor to say what is not ready',
        // The machine may be shared.
        90_000,
        () => (supervisor.output.stdout.includes('[supervisor] not ready after 3 s (GET /readyz): ') ? true : undefined),
        supervisor.dump,
      );
      // The gateway waits for Redis before it listens, or answers that Redis is unreachable.
      expect(supervisor.output.stdout).toMatch(
        new RegExp(`not ready after 3 s \\(GET /readyz\\): .*(Redis at 127\\.0\\.0\\.1:${nothing} \\(REDIS_URL\\): connect ECONNREFUSED|redis: [^;]*ECONNREFUSED)`),
      );
      expect(supervisor.output.stdout).not.toContain('[supervisor] ready:');
    } finally {
      supervisor.child.kill('SIGTERM');
      await within('the supervisor to exit after SIGTERM', 30_000, supervisor.exited, supervisor.dump);
      await within('every process to end', 30_000, supervisor.closed, supervisor.dump);
      await dropStartedDatabase(databaseName);
    }
  }, 240_000);
});

describe('npm run customer -- create (services/identity/dist/cli/customer.js)', () => {
  it('prints a new customer that then exists in identity.customers', async () => {
    const databaseName = newDatabaseName();
    const databaseUrl = databaseUrlFor(databaseName);
    await migrateAll(databaseUrl);
    const key = randomBytes(32).toString('hex');
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, SECRETS_ENCRYPTION_KEY: key, LOG_LEVEL: 'warn' };

    const runCreate = async () => {
      const cli = spawnNode(['services/identity/dist/cli/customer.js', 'create'], env);
      const exit = await within('customer create to exit', 30_000, cli.exited, cli.dump);
      await within('customer create output', 10_000, cli.closed, cli.dump);
      expect(exit, cli.dump()).toEqual({ code: 0, signal: null });
      const id = /^CUSTOMER_ID=(\S+)$/m.exec(cli.output.stdout)?.[1];
      const secret = /^CUSTOMER_SECRET=(\S+)$/m.exec(cli.output.stdout)?.[1];
      expect(id, cli.dump()).toMatch(UUID);
      expect(secret, cli.dump()).toMatch(/^[0-9a-f]{64}$/);
      return { id: id!, secret: secret! };
    };

    const first = await runCreate();
    const second = await runCreate();
    expect(second.id).not.toBe(first.id);
    expect(second.secret).not.toBe(first.secret);

    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      const rows = await sql.query('SELECT id::text AS id, secret_encrypted FROM identity.customers ORDER BY created_at, id');
      const box = new SecretBox(parseEncryptionKey(key));
      const stored = rows.rows.map((row) => ({ id: row.id, secret: box.open(row.secret_encrypted, `customer:${row.id}`) }));
      expect(stored).toHaveLength(2);
      expect(stored).toEqual(expect.arrayContaining([first, second]));
    } finally {
      await sql.end();
    }
    await dropStartedDatabase(databaseName);
  }, 90_000);

  it('rejects an unknown command with exit code 2 and creates nothing', async () => {
    const databaseName = newDatabaseName();
    const databaseUrl = databaseUrlFor(databaseName);
    await migrateAll(databaseUrl);
    const cli = spawnNode(['services/identity/dist/cli/customer.js', 'destroy'], { ...process.env, DATABASE_URL: databaseUrl });
    const exit = await within('customer destroy to exit', 30_000, cli.exited, cli.dump);
    await within('customer destroy output', 10_000, cli.closed, cli.dump);
    expect(exit).toEqual({ code: 2, signal: null });
    expect(cli.output.stderr).toContain('usage');
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      expect((await sql.query('SELECT count(*)::int AS n FROM identity.customers')).rows).toEqual([{ n: 0 }]);
    } finally {
      await sql.end();
    }
    await dropStartedDatabase(databaseName);
  }, 60_000);
});
