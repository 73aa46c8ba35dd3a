/**
 * Every service in a database of its own (IDENTITY_DATABASE_URL, CONVERSATION_DATABASE_URL, …):
 * the event flow, the export and the deletion cascade work across them, each database holds its
 * own service's schema only, and no service's connection is ever seen on another's database.
 */
import { randomUUID } from 'node:crypto';
import { SERVICE_DATABASE_VARS, type DatabaseService } from '@collab/shared';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { until } from '@collab/shared/devkit';
import { mentioning, postMessage } from '../support/activity.js';
import { asCustomer, createApplication, uniqueId } from '../support/client.js';
import { waitForQueuesIdle } from '../support/queues.js';
import type { TestSystem } from '../support/system.js';
import { customerToken } from '../support/tokens.js';
import { systemWithReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const SERVICES = Object.keys(SERVICE_DATABASE_VARS) as DatabaseService[];

let system: TestSystem;
let receiver: WebhookReceiver;
/** A connection to each service's database, named so that it is told apart from the services' own. */
const databases = {} as Record<DatabaseService, pg.Pool>;
const secrets = new Map<string, string>();
/** Every (database, application_name) of the services' connections seen while the tests ran. */
const seen = new Set<string>();
let sampler: NodeJS.Timeout | undefined;

const databaseName = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

async function sampleConnections(): Promise<void> {
  const names = [system.env.DATABASE_URL, ...SERVICES.map((service) => system.env[SERVICE_DATABASE_VARS[service]])].map(databaseName);
  const { rows } = await system.sql.query(
    `SELECT datname, application_name FROM pg_stat_activity WHERE datname = ANY($1) AND application_name LIKE 'collab-%'`,
    [names],
  );
  for (const row of rows) seen.add(`${row.datname} ${row.application_name}`);
}

systemWithReceiver(secrets, (started) => {
  ({ system, receiver } = started);
  for (const service of SERVICES) {
    databases[service] = new pg.Pool({ connectionString: system.env[SERVICE_DATABASE_VARS[service]], max: 1, application_name: 'scale-test' });
    databases[service].on('error', () => undefined);
  }
  sampler = setInterval(() => void sampleConnections().catch(() => undefined), 50);
}, {
  databasePerService: true,
  beforeStop: async () => {
    clearInterval(sampler);
    for (const pool of Object.values(databases)) await pool.end();
  },
});

async function count(service: DatabaseService, sql: string, applicationId: string): Promise<number> {
  return (await databases[service].query(`SELECT (${sql})::int AS n`, [applicationId])).rows[0].n;
}

/** The application's rows in each service's own database. */
async function rowsOf(applicationId: string) {
  return {
    users: await count('identity', 'SELECT count(*) FROM identity.users WHERE application_id = $1', applicationId),
    messages: await count('conversation', 'SELECT count(*) FROM conversation.messages WHERE application_id = $1', applicationId),
    notifications: await count('notification', 'SELECT count(*) FROM notification.notifications WHERE application_id = $1', applicationId),
    registrations: await count('webhooks', 'SELECT count(*) FROM webhooks.registrations WHERE application_id = $1', applicationId),
  };
}

describe('a database per service', () => {
  it('carries events across the databases, exports from all of them, purges a deleted application in each, and imports the export back', async () => {
    const app = await createApplication(system, 'per-service');
    secrets.set(app.id, app.secret);
    for (const userId of ['ann', 'bob']) expect((await app.client.put(`/v1/users/${userId}`, { name: userId })).status).toBe(200);
    expect((await app.client.put('/v1/groups/team', { name: 'Team', members: ['ann', 'bob'] })).status).toBe(200);
    const path = await receiver.register(app, ['thread-message-added']);

    const threadId = uniqueId('thread');
    const text = `hello ${randomUUID()}`;
    const messageId = await postMessage(app, threadId, {
      authorID: 'ann',
      content: mentioning(text, 'bob'),
      createThread: { groupID: 'team', location: { page: threadId }, url: `https://example.com/${threadId}`, name: threadId },
    });
    // Conversation's outbox hands the message to notification (bob is mentioned) and to webhooks.
    const [event] = await receiver.waitFor((received) => received.path === path && (received.body as { messageID?: string })?.messageID === messageId);
    expect(event.verified).toBe(true);
    await until(async () => (await rowsOf(app.id)).notifications === 1, "the notification of the mention");
    expect(await rowsOf(app.id)).toEqual({ users: 2, messages: 1, notifications: 1, registrations: 1 });

    // Identity writes its own tables and asks each service for its own.
    const dump = await fetch(`${system.url}/v1/customer/dbdump`, {
      headers: { authorization: `Bearer ${await customerToken(system.customer.id, system.customer.secret)}` },
    });
    expect(dump.status).toBe(200);
    const body = await dump.text();
    expect(body).toContain(app.id);
    expect(body).toContain(text);

    const deleted = await asCustomer(system).delete(`/v1/applications/${app.id}`, { secret: app.secret });
    expect(deleted.status).toBe(200);
    await waitForQueuesIdle(system);
    await until(async () => (await rowsOf(app.id)).registrations === 0, "the purge of the webhook registrations");
    expect(await rowsOf(app.id)).toEqual({ users: 0, messages: 0, notifications: 0, registrations: 0 });

    // The export imports back: identity reads the dump and hands each service its rows, into its own database.
    const asCustomerToken = await customerToken(system.customer.id, system.customer.secret);
    const started = await fetch(`${system.url}/v1/customer/imports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${asCustomerToken}`, 'content-type': 'application/sql' },
      body,
    });
    expect(started.status).toBe(202);
    const { importID } = (await started.json()) as { importID: string };
    await until(async () => {
      const status = await fetch(`${system.url}/v1/customer/imports/${importID}`, { headers: { authorization: `Bearer ${asCustomerToken}` } });
      return ((await status.json()) as { status: string }).status === 'completed';
    }, 'the import of the export');
    expect(await rowsOf(app.id)).toEqual({ users: 2, messages: 1, notifications: 1, registrations: 1 });
  });

  it("keeps each service's schema in its own database, and nothing in DATABASE_URL's", async () => {
    const schemas = async (pool: pg.Pool | pg.Pool) =>
      (await pool.query(`SELECT schema_name FROM information_schema.schemata WHERE schema_name = ANY($1) ORDER BY 1`, [SERVICES])).rows.map(
        (row) => row.schema_name,
      );
    for (const service of SERVICES) expect(await schemas(databases[service]), service).toEqual([service]);
    expect(await schemas(system.sql)).toEqual([]);
  });

  it("never shows a service's connection on another service's database", async () => {
    await sampleConnections();
    const byDatabase = new Map<string, Set<string>>();
    for (const entry of seen) {
      const [datname, applicationName] = entry.split(' ');
      byDatabase.set(datname, (byDatabase.get(datname) ?? new Set()).add(applicationName));
    }
    // Each service's connections (collab-<service>, collab-<service>-worker) on its own database only.
    for (const service of SERVICES) {
      const own = databaseName(system.env[SERVICE_DATABASE_VARS[service]]);
      const names = [...(byDatabase.get(own) ?? [])];
      expect(names.length, `${service}: no connection seen`).toBeGreaterThan(0);
      for (const name of names) expect(name.replace(/-worker$/, ''), `${name} on ${own}`).toBe(`collab-${service}`);
    }
    expect([...(byDatabase.get(databaseName(system.env.DATABASE_URL)) ?? [])]).toEqual([]);
  });
});
