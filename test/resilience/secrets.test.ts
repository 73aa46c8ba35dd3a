/**
 * Secrets at rest (issue #7 point 6): application and customer secrets are stored encrypted
 * (AES-256-GCM with SECRETS_ENCRYPTION_KEY, bound to their row), never returned after creation,
 * never logged; tokens signed with the plaintext secrets keep working through the gateway; the
 * DELETE secret is compared without leaking its length; secrets stored before encryption are
 * encrypted at identity's next start and keep working; a wrong or malformed key stops identity
 * and the customer CLI at start with a message naming the variable. Needs the build (it runs
 * services/identity/dist processes).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { getApplicationManagementAuthToken, getServerAuthToken } from '@cord-sdk/server';
import { LOG_REDACT_PATHS, parseEncryptionKey, SecretBox, SecretBoxError, type Logger } from '@collab/shared';
import { createServiceDataSource, ensureDatabase, migrateServiceSchema } from '@collab/shared/storage';
import pg from 'pg';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { dropDatabase, freePort } from '@collab/shared/devkit';
import { loadIdentityConfig } from '../../services/identity/src/config.js';
import { CreateIdentitySchema1763700000000 } from '../../services/identity/src/migrations/1763700000000-create-identity-schema.js';
import { ensureBootCustomer } from '../../services/identity/src/domain/customers/customers.js';
import { createIdentityService } from '../../services/identity/src/service.js';
import { asCustomer, createApplication, request, type ApiResponse, type TestApplication } from '../support/client.js';
import { expectError } from '../support/expect.js';
import { runScript } from '../support/processes.js';
import { migrateAll, systemForFile, type TestSystem } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';


// Every log line of this file's system and of the identity services it starts, at every level.
const lines: string[] = [];
const logger: Logger = pino(
  { level: 'trace', base: { service: 'test' }, redact: { paths: [...LOG_REDACT_PATHS], censor: '[redacted]' } },
  { write: (line: string) => void lines.push(line) },
);
/** Every plaintext secret this file handles: none may reach a log line. */
const secrets = new Set<string>();

let system: TestSystem;
let box: SecretBox;

systemForFile(async (started) => {
  system = started;
  box = new SecretBox(parseEncryptionKey(system.env.SECRETS_ENCRYPTION_KEY));
  secrets.add(system.customer.secret);
  secrets.add(system.env.SECRETS_ENCRYPTION_KEY);
}, { logger });

const otherKey = () => randomBytes(32).toString('hex');

async function newApplication(name = 'secrets'): Promise<TestApplication> {
  const app = await createApplication(system, name);
  secrets.add(app.secret);
  return app;
}

interface StoredRow {
  secret_encrypted: string | null;
  plaintext_secret: string | null;
  text: string;
}

/** The stored row as PostgreSQL has it, and the whole row as text. */
async function stored(sql: pg.Pool | pg.Client, table: 'customers' | 'applications', id: string): Promise<StoredRow> {
  const { rows } = await sql.query(
    `SELECT t.secret_encrypted, t.plaintext_secret, row_to_json(t)::text AS text FROM identity.${table} t WHERE t.id = $1`,
    [id],
  );
  expect(rows, `${table} ${id}`).toHaveLength(1);
  return rows[0];
}

/** Rows as the migration leaves those stored before encryption: the plaintext in plaintext_secret. */
async function insertLegacyRows(): Promise<{ customer: { id: string; secret: string }; app: { id: string; secret: string } }> {
  const customer = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
  const app = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
  await system.sql.query('INSERT INTO identity.customers (id, plaintext_secret) VALUES ($1, $2)', [customer.id, customer.secret]);
  await system.sql.query('INSERT INTO identity.applications (id, customer_id, name, plaintext_secret) VALUES ($1, $2, $3, $4)', [
    app.id,
    customer.id,
    'legacy',
    app.secret,
  ]);
  secrets.add(customer.secret).add(app.secret);
  return { customer, app };
}

/** Boots another identity service on `env` as identity's start does (main-api.ts), then stops it. */
async function startIdentity(env: Record<string, string>): Promise<void> {
  const identity = await createIdentityService(loadIdentityConfig(env), logger.child({ service: 'identity-restart' }));
  try {
    await ensureBootCustomer(identity.ctx, null);
  } finally {
    await identity.close();
  }
}

function errorOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error) => error,
  );
}

describe('secrets at rest', () => {
  it('stores a new application’s and the customer’s secret encrypted, opening only with the key and for its own row', async () => {
    const app = await newApplication();
    const other = await newApplication('other');
    const added = await system.addCustomer();
    secrets.add(added.secret);
    for (const [table, owner, id, secret] of [
      ['applications', 'application', app.id, app.secret],
      ['customers', 'customer', system.customer.id, system.customer.secret],
      ['customers', 'customer', added.id, added.secret],
    ] as const) {
      const row = await stored(system.sql, table, id);
      expect(row.plaintext_secret).toBeNull();
      expect(row.secret_encrypted).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
      expect(row.text).not.toContain(secret);
      expect(box.open(row.secret_encrypted!, `${owner}:${id}`)).toBe(secret);
      expect(() => new SecretBox(parseEncryptionKey(otherKey())).open(row.secret_encrypted!, `${owner}:${id}`)).toThrow(SecretBoxError);
      expect(() => box.open(row.secret_encrypted!, `${owner}:${other.id}`)).toThrow(SecretBoxError);
    }
    // Nowhere else in identity's tables either.
    const { rows } = await system.sql.query(
      `SELECT row_to_json(c)::text AS text FROM identity.customers c UNION ALL SELECT row_to_json(a)::text FROM identity.applications a`,
    );
    const everything = rows.map((row: { text: string }) => row.text).join('\n');
    for (const secret of [app.secret, other.secret, system.customer.secret, added.secret]) expect(everything).not.toContain(secret);
  });

  it('a sealed secret copied to another application’s row does not open there: its tokens are refused', async () => {
    const source = await newApplication('source');
    const target = await newApplication('target');
    const { secret_encrypted: sealed } = await stored(system.sql, 'applications', source.id);
    await system.sql.query('UPDATE identity.applications SET secret_encrypted = $2 WHERE id = $1', [target.id, sealed]);
    const credentials = await request(system.serviceUrls.identity, 'GET', `/internal/applications/${target.id}/credentials`, {
      headers: { 'x-collab-internal-token': system.env.INTERNAL_TOKEN },
    });
    expect(credentials.status).toBe(500);
    expect(JSON.stringify(credentials.body)).not.toContain(source.secret);
    const forged = await request(system.url, 'GET', '/v1/verify', { token: await serverToken(target.id, source.secret) });
    expect(forged.status).not.toBe(200);
    expect(JSON.stringify(forged.body)).not.toContain(source.secret);
  });

  it('tokens the SDK signs with the plaintext secrets work through the gateway, and so does POST /v1/authorize', async () => {
    const app = await newApplication('sdk');
    const verified = await request(system.url, 'GET', '/v1/verify', { token: getServerAuthToken(app.id, app.secret) });
    expect(verified.body).toEqual({ success: true, application_id: app.id, application_name: 'sdk' });
    const listed = await request(system.url, 'GET', '/v1/applications', {
      token: getApplicationManagementAuthToken(system.customer.id, system.customer.secret),
    });
    expect(listed.status).toBe(200);
    const authorized = await request(system.url, 'POST', '/v1/authorize', { body: { signed_app_token: getServerAuthToken(app.id, app.secret) } });
    expect(authorized.status, JSON.stringify(authorized.body)).toBe(200);
    expect((await request(system.url, 'GET', '/v1/users', { token: authorized.body.access_token })).status).toBe(200);
  });

  it('GET, list and update answers never carry a secret, plaintext or sealed', async () => {
    const app = await newApplication('quiet');
    const { secret_encrypted: sealed } = await stored(system.sql, 'applications', app.id);
    const customer = asCustomer(system);
    const answers: ApiResponse[] = [];
    for (const prefix of ['/v1/applications', '/v1/projects']) {
      answers.push(await customer.get(prefix), await customer.get(`${prefix}/${app.id}`), await customer.put(`${prefix}/${app.id}`, { name: 'renamed' }));
    }
    answers.push(await app.client.get('/v1/verify'));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const text = JSON.stringify(answer.body);
      for (const value of [app.secret, sealed!, system.customer.secret]) expect(text).not.toContain(value);
      expect(text).not.toMatch(/"secret"/);
    }
  });

  it('DELETE with a wrong secret of the same length, another length or none is refused and changes nothing', async () => {
    const app = await newApplication('kept');
    const before = await stored(system.sql, 'applications', app.id);
    const customer = asCustomer(system);
    const path = `/v1/applications/${app.id}`;
    const sameLength = `${app.secret.slice(0, -1)}${app.secret.endsWith('0') ? '1' : '0'}`;
    for (const wrong of [sameLength, `${app.secret}0`, app.secret.slice(0, 32), 'x', app.secret.toUpperCase()])
      expectError(
        await customer.delete(path, { secret: wrong }),
        401,
        'application_not_found',
        `The secret is not the current secret of application ${app.id}: nothing was deleted.`,
      );
    expectError(await customer.delete(path, { secret: '' }), 400, 'invalid_field');
    expectError(await customer.delete(path, {}), 400, 'missing_field', 'Missing required field: secret.');
    expect(await stored(system.sql, 'applications', app.id)).toEqual(before);
    expect((await app.client.get('/v1/verify')).status).toBe(200);

    const deleted = await customer.delete(path, { secret: app.secret });
    expect(deleted.body).toEqual({ success: true, message: `You successfully deleted application ${app.id}` });
    expect((await system.sql.query('SELECT 1 FROM identity.applications WHERE id = $1', [app.id])).rowCount).toBe(0);
  });
});

describe('secrets stored before encryption', () => {
  it('survive the migration and are encrypted at the next start, once', async () => {
    // A database of the previous release: the first migration only, secrets in plaintext.
    const name = `collab_test_secrets_${randomBytes(6).toString('hex')}`;
    const url = new URL(system.env.DATABASE_URL);
    url.pathname = `/${name}`;
    const databaseUrl = url.toString();
    const customer = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
    const app = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
    secrets.add(customer.secret).add(app.secret);
    try {
      await ensureDatabase(databaseUrl);
      const previous = createServiceDataSource({
        url: databaseUrl,
        schema: 'identity',
        entities: [],
        migrations: [CreateIdentitySchema1763700000000],
        poolSize: 2,
        applicationName: 'secrets-test',
      });
      await previous.initialize();
      await migrateServiceSchema(previous, 'identity');
      await previous.query('INSERT INTO identity.customers (id, secret) VALUES ($1, $2)', [customer.id, customer.secret]);
      await previous.query('INSERT INTO identity.applications (id, customer_id, name, secret) VALUES ($1, $2, $3, $4)', [app.id, customer.id, 'old', app.secret]);
      await previous.destroy();

      await migrateAll(databaseUrl);
      const sql = new pg.Client({ connectionString: databaseUrl });
      await sql.connect();
      try {
        expect(await stored(sql, 'applications', app.id)).toMatchObject({ plaintext_secret: app.secret, secret_encrypted: null });
        await startIdentity({ ...system.env, DATABASE_URL: databaseUrl });
        const sealed: string[] = [];
        for (const [table, owner, id, secret] of [
          ['customers', 'customer', customer.id, customer.secret],
          ['applications', 'application', app.id, app.secret],
        ] as const) {
          const row = await stored(sql, table, id);
          expect(row.plaintext_secret).toBeNull();
          expect(row.text).not.toContain(secret);
          expect(box.open(row.secret_encrypted!, `${owner}:${id}`)).toBe(secret);
          sealed.push(row.secret_encrypted!);
        }
        // Idempotent: a second start changes nothing.
        await startIdentity({ ...system.env, DATABASE_URL: databaseUrl });
        expect([(await stored(sql, 'customers', customer.id)).secret_encrypted, (await stored(sql, 'applications', app.id)).secret_encrypted]).toEqual(sealed);
      } finally {
        await sql.end();
      }
    } finally {
      await dropDatabase(databaseUrl, name);
    }
  }, 60_000);

  it('keep working through the gateway once identity has encrypted them', async () => {
    const legacy = await insertLegacyRows();
    await startIdentity(system.env);
    expect(await stored(system.sql, 'applications', legacy.app.id)).toMatchObject({ plaintext_secret: null });
    const verified = await request(system.url, 'GET', '/v1/verify', { token: await serverToken(legacy.app.id, legacy.app.secret) });
    expect(verified.body).toEqual({ success: true, application_id: legacy.app.id, application_name: 'legacy' });
    const listed = await request(system.url, 'GET', '/v1/applications', { token: await customerToken(legacy.customer.id, legacy.customer.secret) });
    expect(listed.body.map((entry: { id: string }) => entry.id)).toEqual([legacy.app.id]);
  });
});

describe('a wrong key', () => {
  it('stops identity at start with a message naming the variable, before it encrypts anything', async () => {
    const legacy = await insertLegacyRows();
    const error = await errorOf(startIdentity({ ...system.env, SECRETS_ENCRYPTION_KEY: otherKey() }));
    expect(error.message).toMatch(/^SECRETS_ENCRYPTION_KEY does not decrypt the stored secrets \(customer [0-9a-f-]{36}\)/);
    // Nothing was sealed with the wrong key.
    expect(await stored(system.sql, 'customers', legacy.customer.id)).toMatchObject({ plaintext_secret: legacy.customer.secret, secret_encrypted: null });
    await startIdentity(system.env);
  });

  it('stops the identity process (exit 1) with that message, and a malformed key with a config error, never echoing a key', async () => {
    const wrong = otherKey();
    const env = { ...system.env, PORT: String(await freePort()), METRICS_PORT: '0', LOG_LEVEL: 'silent' };
    const wrongKey = await runScript('services/identity/dist/main-api.js', [], { ...env, SECRETS_ENCRYPTION_KEY: wrong });
    expect(wrongKey.code, wrongKey.stderr).toBe(1);
    expect(wrongKey.stderr).toContain('identity failed to start: SECRETS_ENCRYPTION_KEY does not decrypt the stored secrets');
    const malformed = await runScript('services/identity/dist/main-api.js', [], { ...env, SECRETS_ENCRYPTION_KEY: `${wrong}00` });
    expect(malformed.code, malformed.stderr).toBe(1);
    expect(malformed.stderr).toContain('SECRETS_ENCRYPTION_KEY is invalid: must be a 32-byte key');
    for (const output of [wrongKey, malformed])
      for (const value of [wrong, system.env.SECRETS_ENCRYPTION_KEY]) expect(output.stdout + output.stderr).not.toContain(value);
  }, 60_000);

  it('stops the customer CLI before it writes; with the right key it creates an encrypted customer that works', async () => {
    const cli = 'services/identity/dist/cli/customer.js';
    const env = { DATABASE_URL: system.env.DATABASE_URL };
    const count = async () => Number((await system.sql.query('SELECT count(*) FROM identity.customers')).rows[0].count);
    const before = await count();
    const refused = await runScript(cli, ['create'], { ...env, SECRETS_ENCRYPTION_KEY: otherKey() });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toContain('SECRETS_ENCRYPTION_KEY does not decrypt the stored secrets');
    expect(await count()).toBe(before);

    const created = await runScript(cli, ['create'], { ...env, SECRETS_ENCRYPTION_KEY: system.env.SECRETS_ENCRYPTION_KEY });
    expect(created.code, created.stderr).toBe(0);
    const id = /^CUSTOMER_ID=(\S+)$/m.exec(created.stdout)![1];
    const secret = /^CUSTOMER_SECRET=(\S+)$/m.exec(created.stdout)![1];
    secrets.add(secret);
    const row = await stored(system.sql, 'customers', id);
    expect(row.plaintext_secret).toBeNull();
    expect(row.text).not.toContain(secret);
    expect((await request(system.url, 'GET', '/v1/applications', { token: await customerToken(id, secret) })).status).toBe(200);
  }, 60_000);
});

describe('logs', () => {
  it('never carry a secret or the key: creating, using and deleting an application, and everything above', async () => {
    const app = await newApplication('logged');
    expect((await app.client.put('/v1/users/logged', { name: 'Logged' })).status).toBe(200);
    expect((await asCustomer(system).delete(`/v1/applications/${app.id}`, { secret: 'wrong' })).status).toBe(401);
    expect((await asCustomer(system).delete(`/v1/applications/${app.id}`, { secret: app.secret })).status).toBe(200);
    expect(lines.filter((line) => line.includes(app.id)).length).toBeGreaterThan(0);
    for (const value of secrets) expect(lines.filter((line) => line.includes(value)), 'a log line holds a secret').toEqual([]);
  });
});
