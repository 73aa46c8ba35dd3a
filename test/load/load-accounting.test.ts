/**
 * Mixed traffic for two minutes (LOAD_SECONDS) as fast as this machine answers, then an exact
 * reconciliation: every acknowledged write is readable, every acknowledged delete is gone, and the
 * API and the database agree on every count. Issue #7 point 5; the figures go to RELIABILITY.md.
 *
 * Each virtual client owns its threads and messages, so the ledger of what it was told is exact
 * without guessing about races; the two applications and the shared users exercise tenancy and
 * contention on the same rows.
 *
 * LOAD_SYSTEM picks the system under load: `processes` (what `npm run test:load` and
 * `npm run soak` pick, after building) runs the real processes as `npm start` does and samples each
 * one's resident memory and event-loop lag meanwhile; `in-process` (the default here, since it
 * needs no build) runs every service inside this process. LOAD_REPORT names a
 * markdown file (RELIABILITY.md) whose soak section gets those figures over time. Only the
 * outcome is asserted (no errors, exact accounting, no process restarted), never a figure.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApplication, uniqueId, type ApiResponse, type TestApplication } from '../support/client.js';
import { startSampling } from '../support/process-sampler.js';
import { startProcessSystem, type ProcessSystem } from '../support/process-system.js';
import { waitForQueuesIdle } from '../support/queues.js';
import { startSystem, type TestSystem } from '../support/system.js';
import { markersIn, soakReport, writeBetweenMarkers, type SoakRun } from './soak-report.js';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 120);
const CLIENTS_PER_APPLICATION = Number(process.env.LOAD_CLIENTS ?? 12);
const SHARED_USERS = ['ann', 'bob', 'carl', 'dora'];
const SYSTEM = process.env.LOAD_SYSTEM ?? 'in-process';
if (SYSTEM !== 'in-process' && SYSTEM !== 'processes') throw new Error(`LOAD_SYSTEM must be in-process or processes, not ${SYSTEM}`);
const REPORT = process.env.LOAD_REPORT;
/** How often the processes are sampled: event-loop lag figures cover the time between two samples. */
const SAMPLE_MS = 5000;
const enc = encodeURIComponent;

/** What one application was told it now stores. */
interface Ledger {
  users: Set<string>;
  /** thread id → message id → the text last acknowledged */
  messages: Map<string, Map<string, string>>;
  /** recipient → notification ids */
  notifications: Map<string, Set<string>>;
}

const newLedger = (): Ledger => ({ users: new Set(SHARED_USERS), messages: new Map(), notifications: new Map() });

interface Tally {
  requests: number;
  errors: { operation: string; status: number; body: unknown }[];
  latenciesMs: number[];
  byOperation: Record<string, number>;
}

let system: TestSystem;
/** The same system when it runs as real processes (LOAD_SYSTEM=processes). */
let processSystem: ProcessSystem | null = null;
const applications: { app: TestApplication; ledger: Ledger }[] = [];

const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];

beforeAll(async () => {
  if (REPORT) {
    if (SYSTEM !== 'processes') throw new Error('LOAD_REPORT needs LOAD_SYSTEM=processes: the report is about the processes');
    markersIn(REPORT); // before the run, not after it
  }
  // The processes run with the settings `npm start` ships (and whatever this environment adds,
  // e.g. DB_POOL_SIZE on a shared database server); the in-process system with one event loop
  // for everything gets larger pools than a test's default.
  if (SYSTEM === 'processes') system = processSystem = await startProcessSystem();
  else system = await startSystem({ env: { DB_POOL_SIZE: '10' } });
  for (const name of ['load A', 'load B']) {
    const app = await createApplication(system, name);
    for (const id of SHARED_USERS) await app.client.put(`/v1/users/${id}`, { name: id });
    await app.client.put('/v1/groups/team', { name: 'team', members: SHARED_USERS });
    applications.push({ app, ledger: newLedger() });
  }
}, 180_000);
afterAll(() => system?.stop());

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];

/** autovacuum's default naptime: how often it would look at each database. */
const VACUUM_EVERY_MS = 60_000;

/**
 * What autovacuum would do, done by the load when the server runs without it (a CI server may turn
 * it off): every deployment runs PostgreSQL with autovacuum, and without it the run measures a
 * database that is never analyzed (plans made for empty tables) and never vacuumed (every message
 * leaves a dead version of its thread's row behind), not the system. On a connection of its own,
 * taken at the start, so that a busy server cannot refuse it later. Returns null when the server
 * vacuums by itself; stop() waits for a VACUUM in progress and says what ran, for the report: a
 * failed VACUUM is reported there rather than failing the run, as autovacuum's would be logged.
 */
async function vacuumInPlaceOfAutovacuum(databaseUrl: string): Promise<{ stop(): Promise<string> } | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query('SHOW autovacuum');
  if (rows[0].autovacuum === 'on') {
    await client.end();
    return null;
  }
  let runs = 0;
  const failures: string[] = [];
  let running = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() =>
      client.query('VACUUM (ANALYZE)').then(
        () => void runs++,
        (error: Error) => void failures.push(error.message),
      ),
    );
  }, VACUUM_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await client.end();
      const failed = failures.length > 0 ? `; ${failures.length} failed: ${[...new Set(failures)].join('; ')}` : '';
      return `off on this server, so the load ran VACUUM (ANALYZE) every ${VACUUM_EVERY_MS / 1000} s in its place (${runs} times${failed})`;
    },
  };
}

/** One virtual client: a closed loop of weighted operations until the deadline. */
async function runClient(app: TestApplication, ledger: Ledger, tally: Tally, deadline: number): Promise<void> {
  const ownThreads = [uniqueId('load-thread'), uniqueId('load-thread'), uniqueId('load-thread')];
  const ownMessages: { threadID: string; messageID: string }[] = [];

  async function timed(operation: string, call: () => Promise<ApiResponse>, ok: (r: ApiResponse) => boolean) {
    const started = performance.now();
    const response = await call();
    tally.latenciesMs.push(performance.now() - started);
    tally.requests++;
    tally.byOperation[operation] = (tally.byOperation[operation] ?? 0) + 1;
    if (!ok(response)) tally.errors.push({ operation, status: response.status, body: response.body });
    return response;
  }
  const is200 = (r: ApiResponse) => r.status === 200;

  const operations: [weight: number, run: () => Promise<void>][] = [
    [15, async () => {
      const userID = uniqueId('load-user');
      const r = await timed('put user', () => app.client.put(`/v1/users/${enc(userID)}`, { name: userID, email: `${userID}@example.com` }), is200);
      if (is200(r)) ledger.users.add(userID);
    }],
    [30, async () => {
      const threadID = pick(ownThreads);
      const text = uniqueId('text');
      const r = await timed('create message', () => app.client.post(`/v1/threads/${enc(threadID)}/messages`, {
        authorID: pick(SHARED_USERS),
        content: paragraph(text),
        createThread: { groupID: 'team', location: { page: threadID }, url: `https://example.com/${threadID}`, name: threadID },
      }), is200);
      if (!is200(r)) return;
      const messageID = r.body.messageID as string;
      ownMessages.push({ threadID, messageID });
      if (!ledger.messages.has(threadID)) ledger.messages.set(threadID, new Map());
      ledger.messages.get(threadID)!.set(messageID, text);
    }],
    [6, async () => {
      if (ownMessages.length === 0) return;
      const { threadID, messageID } = pick(ownMessages);
      const text = uniqueId('edited');
      const r = await timed('update message', () => app.client.put(`/v1/threads/${enc(threadID)}/messages/${enc(messageID)}`, { content: paragraph(text) }), is200);
      if (is200(r)) ledger.messages.get(threadID)!.set(messageID, text);
    }],
    [4, async () => {
      if (ownMessages.length === 0) return;
      const index = Math.floor(Math.random() * ownMessages.length);
      const { threadID, messageID } = ownMessages[index];
      const r = await timed('delete message', () => app.client.delete(`/v1/threads/${enc(threadID)}/messages/${enc(messageID)}`), is200);
      if (!is200(r)) return;
      ownMessages.splice(index, 1);
      ledger.messages.get(threadID)!.delete(messageID);
    }],
    [10, async () => {
      const recipient = pick(SHARED_USERS);
      const r = await timed('send notification', () => app.client.post('/v1/notifications', {
        actor_id: pick(SHARED_USERS), recipient_id: recipient, template: '{{actor}} pinged you', url: 'https://example.com', type: 'url',
      }), is200);
      if (!is200(r)) return;
      if (!ledger.notifications.has(recipient)) ledger.notifications.set(recipient, new Set());
      ledger.notifications.get(recipient)!.add(r.body.notificationID);
    }],
    [20, async () => {
      const threadID = pick(ownThreads);
      // A thread that has no acknowledged message yet does not exist: 404 is the right answer then.
      const exists = ledger.messages.has(threadID);
      await timed('read thread messages', () => app.client.get(`/v1/threads/${enc(threadID)}/messages`), (r) => (exists ? is200(r) : r.status === 404));
    }],
    [10, async () => {
      await timed('read user', () => app.client.get(`/v1/users/${pick(SHARED_USERS)}`), is200);
    }],
    [5, async () => {
      await timed('read notifications', () => app.client.get(`/v1/users/${pick(SHARED_USERS)}/notifications?limit=10`), is200);
    }],
  ];
  const totalWeight = operations.reduce((sum, [weight]) => sum + weight, 0);
  while (Date.now() < deadline) {
    let roll = Math.random() * totalWeight;
    const [, run] = operations.find(([weight]) => (roll -= weight) < 0)!;
    await run();
  }
}

/** Every page of a paginated list endpoint. */
async function readAll(app: TestApplication, path: string, key: string): Promise<any[]> {
  const items: any[] = [];
  let token: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const r: ApiResponse = await app.client.get(`${path}${token ? `${separator}token=${enc(token)}` : ''}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    items.push(...r.body[key]);
    token = r.body.pagination.token;
  } while (token);
  return items;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/** Reconciles every application's ledger against the API and the database; throws on the first difference. */
async function reconcile(): Promise<Record<string, number>[]> {
  const reconciled: Record<string, number>[] = [];
  for (const { app, ledger } of applications) {
    // Users: the API list and the database hold exactly the acknowledged ones.
    const users = await readAll(app, '/v1/users?limit=1000', 'users');
    expect(new Set(users.map((user) => user.id))).toEqual(ledger.users);
    const storedUsers = await system.sql.query(
      'SELECT count(*)::int AS n FROM identity.users WHERE application_id = $1',
      [app.id],
    );
    expect(storedUsers.rows[0].n).toBe(ledger.users.size);

    // Messages: every thread answers exactly its acknowledged messages, each with its last text.
    let messageCount = 0;
    for (const [threadID, expected] of ledger.messages) {
      const r = await app.client.get(`/v1/threads/${enc(threadID)}/messages`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const stored = new Map<string, string>(r.body.map((message: any) => [message.id, message.plaintext]));
      expect(stored).toEqual(expected);
      messageCount += expected.size;
    }
    const storedMessages = await system.sql.query(
      `SELECT count(*)::int AS n FROM conversation.messages m JOIN conversation.threads t ON t.internal_id = m.thread_id
        WHERE t.application_id = $1 AND m.purging_at IS NULL`,
      [app.id],
    );
    expect(storedMessages.rows[0].n).toBe(messageCount);

    // Notifications: each recipient's sent ones (kind external, shown with a URL) match; the replies
    // the messages caused come on top of them.
    let notificationCount = 0;
    for (const [recipient, expected] of ledger.notifications) {
      const listed = await readAll(app, `/v1/users/${recipient}/notifications?limit=1000`, 'notifications');
      const sent = listed.filter((notification) => notification.attachment.type === 'url');
      expect(new Set(sent.map((notification) => notification.id))).toEqual(expected);
      notificationCount += expected.size;
    }
    reconciled.push({ users: ledger.users.size, threads: ledger.messages.size, messages: messageCount, notifications: notificationCount });
  }
  return reconciled;
}

describe(`${SECONDS} s of mixed traffic (${SYSTEM})`, () => {
  it('answers every request without an error and loses no acknowledged write', async () => {
    const tally: Tally = { requests: 0, errors: [], latenciesMs: [], byOperation: {} };
    const loadAverageAtStart = loadavg()[0];
    const sampler = processSystem
      ? startSampling(processSystem, SAMPLE_MS, () => ({ requests: tally.requests, errors: tally.errors.length, latencies: tally.latenciesMs.length }))
      : null;
    const vacuum = await vacuumInPlaceOfAutovacuum(system.env.DATABASE_URL);
    const startedAt = new Date();
    const started = startedAt.getTime();
    const deadline = started + SECONDS * 1000;
    await Promise.all(
      applications.flatMap(({ app, ledger }) =>
        Array.from({ length: CLIENTS_PER_APPLICATION }, () => runClient(app, ledger, tally, deadline)),
      ),
    );
    const elapsedS = (Date.now() - started) / 1000;
    const samples = await sampler?.stop();
    const vacuumed = await vacuum?.stop();
    await waitForQueuesIdle(system, ['conversation-purge', 'notification-purge', 'identity-batch'], 60_000);

    const sorted = [...tally.latenciesMs].sort((a, b) => a - b);
    const figures = {
      seconds: Number(elapsedS.toFixed(1)),
      clients: CLIENTS_PER_APPLICATION * applications.length,
      requests: tally.requests,
      requestsPerSecond: Number((tally.requests / elapsedS).toFixed(1)),
      p50Ms: Number(percentile(sorted, 50).toFixed(1)),
      p99Ms: Number(percentile(sorted, 99).toFixed(1)),
      maxMs: Number(sorted[sorted.length - 1].toFixed(1)),
      errors: tally.errors.length,
      byOperation: tally.byOperation,
    };
    console.log(`load figures: ${JSON.stringify(figures)}`);

    // Reconciled whatever the errors, so that the report says how the accounting came out.
    let accounting: SoakRun['accounting'];
    let accountingError: unknown = null;
    try {
      const reconciled = await reconcile();
      accounting = { exact: true, reconciled };
      console.log(`load reconciled: ${JSON.stringify(reconciled)}`);
    } catch (error) {
      accountingError = error;
      accounting = { exact: false, failure: (error as Error).message.split('\n')[0] };
    }

    const exits = processSystem?.exits() ?? [];
    if (samples) {
      const settings = Object.fromEntries(
        ['DB_POOL_SIZE', 'NODE_OPTIONS', 'LOAD_CLIENTS'].flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])),
      );
      if (vacuumed) settings.autovacuum = vacuumed;
      const report = soakReport({ startedAt, loadAverageAtStart, figures, accounting, samples, sampleIntervalMs: SAMPLE_MS, latenciesMs: tally.latenciesMs, exits, settings });
      console.log(`soak report:\n${report}`);
      if (REPORT) writeBetweenMarkers(REPORT, report);
    }

    expect(tally.errors.slice(0, 5)).toEqual([]);
    if (accountingError) throw accountingError;
    // A process that crashed and was restarted by the supervisor is a failure, even when no
    // request noticed.
    expect(exits).toEqual([]);
  }, (SECONDS + 240) * 1000);
});
