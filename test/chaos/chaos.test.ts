/**
 * `npm run chaos` (never part of `npm test`): the real processes as `npm start` runs them, on a
 * PostgreSQL cluster and a redis-server of the run's own (cluster.ts), a bounded mixed load
 * (load.ts) and, during it, every fault of faults.ts; then, once no background work is left, the
 * exact reconciliation of reconcile.ts, written to RELIABILITY.md by report.ts. Fails when the
 * reconciliation finds any difference or the system is not ready again after a fault.
 *
 * CHAOS_SECONDS (default 180) bounds the load, CHAOS_CLIENTS (default 3) the clients per
 * application; CHAOS_REPORT names the file the report goes to (RELIABILITY.md; `-`: only printed).
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApplication } from '../support/client.js';
import { FIXTURE_CUSTOMER } from '../support/imports.js';
import { startProcessSystem, type ProcessSystem } from '../support/process-system.js';
import { pollUntil } from '../support/processes.js';
import { waitForBackgroundWork } from '../support/queues.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { serverToken } from '../support/tokens.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { markersIn, writeBetweenMarkers } from '../load/soak-report.js';
import { startOwnServers, type OwnServers } from './cluster.js';
import { faultsFor, runFaults } from './faults.js';
import { runLoad, seedApplication, send, type LoadState } from './load.js';
import { reconcile } from './reconcile.js';
import { chaosReport, SECTION } from './report.js';

const SECONDS = Number(process.env.CHAOS_SECONDS ?? 180);
const CLIENTS = Number(process.env.CHAOS_CLIENTS ?? 3);
const REPORT = process.env.CHAOS_REPORT ?? 'RELIABILITY.md';
const IMPORT_EVERY_MS = 20_000;
/**
 * A mail whose job Redis lost is queued again once it is 10 minutes overdue (pendingMails in
 * services/mail/src/jobs/mail.jobs.ts, looked for every minute): the bound on waiting for mails.
 */
const SETTLE_TIMEOUT_MS = 15 * 60_000;
const log = (line: string) => console.log(`[chaos] ${line}`);

let servers: OwnServers | undefined;
let system: ProcessSystem | undefined;
let smtp: TestSmtpServer | undefined;
const secrets = new Map<string, string>();
const receiver = new WebhookReceiver((id) => secrets.get(id));
/** Each application's webhook path on the receiver. */
const paths = new Map<string, string>();
const state: LoadState = { applications: [], answers: [], imports: [], uncertainImports: 0 };
/** A write through the API, answering its status. */
let probe: () => Promise<number>;

beforeAll(async () => {
  if (REPORT !== '-') markersIn(REPORT, SECTION); // before the run, not after it
  servers = await startOwnServers();
  log(`own PostgreSQL cluster ${servers.postgres.name} on port ${servers.postgres.port}, own redis-server on port ${servers.redis.port}`);
  // Everything the system and the harness open goes to them (test/support reads these).
  process.env.DATABASE_URL = servers.postgres.url;
  process.env.REDIS_URL = servers.redis.url;
  smtp = await startSmtpServer();
  await receiver.start();
  system = await startProcessSystem({
    // The fixture dump's customer, so that its imports land where the fixture's reads expect them.
    customer: FIXTURE_CUSTOMER,
    // Ten processes starting at once take a while on a busy machine.
    readyTimeoutMs: 300_000,
    env: {
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      SMTP_URL: smtp.url,
      EMAIL_DELAY_SECONDS: '0',
      MAIL_FROM: 'Chaos <chaos@chaos.test>',
      EMAIL_DOMAIN: 'chaos.test',
      LINK_PREVIEWS: 'off',
    },
  });
  // The load's applications belong to another customer: the fixture's reads list its customer's applications.
  const owner = { ...system, customer: await system.addCustomer() };
  for (const name of ['chaos A', 'chaos B']) {
    const app = await createApplication(owner, name);
    secrets.set(app.id, app.secret);
    paths.set(app.id, await receiver.register(app, ['thread-message-added', 'notification-created']));
    state.applications.push(await seedApplication(system.url, app));
  }
  // The probe of readiness writes to an application of its own, outside the reconciliation.
  const probeApp = await createApplication(owner, 'chaos probe');
  probe = async () => (await send(system!.url, await serverToken(probeApp.id, probeApp.secret), 'PUT', '/v1/users/probe', { name: 'probe' })).status;
}, 240_000);

afterAll(async () => {
  await system?.stop().catch((error: Error) => log(`stopping the system: ${error.message.split('\n')[0]}`));
  await receiver.stop();
  await smtp?.close();
  await servers?.remove();
}, 120_000);

function versions(sql: ProcessSystem['sql']) {
  const redis = /v=(\S+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? 'unknown';
  return sql.query('SHOW server_version').then(({ rows }) => ({
    Node: process.version.slice(1),
    PostgreSQL: String(rows[0].server_version).split(' ')[0],
    Redis: redis,
  }));
}

describe(`chaos: ${SECONDS} s of load with every fault`, () => {
  it('is ready again after every fault and reconciles exactly', async () => {
    const sys = system!;
    const startedAt = new Date();
    const loadAverageAtStart = loadavg()[0];
    let deadline = Date.now() + SECONDS * 1000;
    const load = runLoad(sys.url, state, FIXTURE_CUSTOMER, { clients: CLIENTS, importEveryMs: IMPORT_EVERY_MS, deadline: () => deadline });
    const faults = await runFaults(sys, faultsFor(sys, servers!.redis, servers!.postgres), probe, SECONDS * 1000, log);
    // The load goes on a little after the last fault, so that its writes meet the recovered system.
    deadline = Math.max(deadline, Date.now() + 5000);
    await load;
    log(`load done: ${state.answers.length} requests; waiting for the background work`);

    await waitForBackgroundWork(sys, 300_000);
    const ids = state.applications.map(({ app }) => app.id);
    // Reconciled also when this times out: the mail check then names the mails still pending.
    await pollUntil('every mail and webhook delivery to be settled', SETTLE_TIMEOUT_MS, async () => {
      const { rows } = await sys.sql.query(
        `SELECT (SELECT count(*) FROM mail.mails WHERE application_id = ANY($1) AND status = 'pending')
              + (SELECT count(*) FROM webhooks.deliveries WHERE application_id = ANY($1) AND status = 'pending') AS n`,
        [ids],
      );
      return Number(rows[0].n) === 0 ? true : undefined;
    }).catch((error: Error) => log(error.message));

    const checks = await reconcile(sys, state, receiver, paths, smtp!);
    const report = chaosReport({
      command: `npm run chaos${process.env.CHAOS_SECONDS ? ` (CHAOS_SECONDS=${SECONDS})` : ''}`,
      startedAt,
      seconds: SECONDS,
      clients: CLIENTS * state.applications.length,
      loadAverageAtStart,
      versions: await versions(sys.sql),
      faults,
      answers: state.answers,
      checks,
    });
    console.log(`chaos report:\n${report}`);
    if (REPORT !== '-') writeBetweenMarkers(REPORT, report, SECTION);
    expect(faults.flatMap((fault) => (fault.notReady ? [`${fault.name}: ${fault.notReady}`] : []))).toEqual([]);
    expect(checks.flatMap((check) => check.failures.map((failure) => `${check.name}: ${failure}`))).toEqual([]);
  }, (SECONDS + 1800) * 1000);
});
