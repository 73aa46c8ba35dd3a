/**
 * The chaos run's exact reconciliation, once no background work is left: every acknowledged write
 * readable through the API, nothing refused or deleted left behind, no duplicate rows, every
 * cascade finished, every recorded event delivered at least once, every mail sent at most once,
 * every acknowledged import completed with the fixture's reads answered as expected. Each check
 * counts what it compared and lists what differs; the run fails when any list is not empty.
 */
import type { ProcessSystem } from '../support/process-system.js';
import { expectedReads, replayExpectedReads } from '../support/fixture-reads.js';
import type { TestSmtpServer } from '../support/smtp-server.js';
import type { WebhookReceiver } from '../support/webhook-receiver.js';
import { customerToken, serverToken } from '../support/tokens.js';
import { send, type ChaosApplication, type LoadState } from './load.js';

export interface Check {
  name: string;
  /** What was compared, e.g. `{ users: 120 }`. */
  counts: Record<string, number>;
  /** Each difference found (empty: exact). */
  failures: string[];
}

const enc = encodeURIComponent;
/** At most this many differences are listed per check. */
const LISTED = 20;

class CheckBuilder {
  readonly counts: Record<string, number> = {};
  readonly failures: string[] = [];
  private dropped = 0;
  constructor(readonly name: string) {}
  count(key: string, by = 1) {
    this.counts[key] = (this.counts[key] ?? 0) + by;
  }
  fail(what: string) {
    if (this.failures.length < LISTED) this.failures.push(what);
    else this.dropped++;
  }
  done(): Check {
    if (this.dropped > 0) this.failures.push(`… and ${this.dropped} more`);
    return { name: this.name, counts: this.counts, failures: this.failures };
  }
}

async function readAll(baseUrl: string, token: string, path: string, key: string): Promise<any[]> {
  const items: any[] = [];
  let next: string | null = null;
  do {
    const answer = await send(baseUrl, token, 'GET', `${path}${next ? `&token=${enc(next)}` : ''}`);
    if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    items.push(...answer.body[key]);
    next = answer.body.pagination.token;
  } while (next);
  return items;
}

async function checkUsers(system: ProcessSystem, applications: ChaosApplication[]): Promise<Check> {
  const check = new CheckBuilder('users: acknowledged upserts readable, deletes gone');
  for (const { app, ledger } of applications) {
    const listed = new Map((await readAll(system.url, await serverToken(app.id, app.secret), '/v1/users?limit=1000', 'users')).map((user) => [user.id as string, user.name as string]));
    for (const [id, name] of ledger.users) {
      check.count('acknowledged');
      if (!listed.has(id)) check.fail(`${app.id}: user ${id} acknowledged, not listed`);
      else if (name !== null && listed.get(id) !== name) check.fail(`${app.id}: user ${id} is named ${listed.get(id)}, acknowledged ${name}`);
    }
    for (const id of ledger.deletedUsers) {
      check.count('deleted');
      if (listed.has(id)) check.fail(`${app.id}: user ${id} deleted, still listed`);
    }
    check.count('uncertain', ledger.uncertainUsers.size);
    for (const id of listed.keys()) if (!ledger.users.has(id) && !ledger.uncertainUsers.has(id)) check.fail(`${app.id}: user ${id} listed, never acknowledged`);
    const { rows } = await system.sql.query('SELECT external_id FROM identity.users WHERE application_id = $1 AND external_id = ANY($2)', [app.id, [...ledger.deletedUsers]]);
    for (const row of rows) check.fail(`${app.id}: deleted user ${row.external_id} still stored`);
  }
  return check.done();
}

/** What the database holds of a message and its thread, for a difference's description. */
async function storedState(system: ProcessSystem, applicationId: string, messageId: string, threadId: string): Promise<string> {
  const { rows: messages } = await system.sql.query(
    'SELECT deleted_at, purging_at FROM conversation.messages WHERE application_id = $1 AND external_id = $2',
    [applicationId, messageId],
  );
  const { rows: threads } = await system.sql.query(
    'SELECT group_id, purging_at FROM conversation.threads WHERE application_id = $1 AND external_id = $2',
    [applicationId, threadId],
  );
  const message = messages[0] ? `message stored, deleted ${messages[0].deleted_at ?? 'no'}, purging ${messages[0].purging_at ?? 'no'}` : 'no message row';
  const thread = threads[0] ? `thread in group ${threads[0].group_id}, purging ${threads[0].purging_at ?? 'no'}` : 'no thread row';
  return `${message}; ${thread}`;
}

async function checkMessages(system: ProcessSystem, applications: ChaosApplication[]): Promise<Check> {
  const check = new CheckBuilder('messages: acknowledged creates readable, deleted threads, groups and authors’ messages gone');
  for (const { app, ledger } of applications) {
    const token = await serverToken(app.id, app.secret);
    for (const threadId of ledger.threads) {
      check.count('threads');
      const answer = await send(system.url, token, 'GET', `/v1/threads/${enc(threadId)}/messages`);
      if (answer.status !== 200) {
        check.fail(`${app.id}: thread ${threadId} answered ${answer.status}`);
        continue;
      }
      const stored = new Map<string, string>(answer.body.map((message: any) => [message.id, message.plaintext]));
      for (const [id, message] of ledger.messages) {
        if (message.threadId !== threadId) continue;
        check.count('acknowledged');
        if (!stored.has(id)) check.fail(`${app.id}: message ${id} by ${message.authorId} in ${threadId} acknowledged, not readable (${await storedState(system, app.id, id, threadId)})`);
        else if (stored.get(id) !== message.text) check.fail(`${app.id}: message ${id} reads ${stored.get(id)}, acknowledged ${message.text}`);
      }
      for (const id of stored.keys()) if (!ledger.messages.has(id) && !ledger.uncertainMessages.has(id)) check.fail(`${app.id}: message ${id} in ${threadId} never acknowledged`);
    }
    check.count('uncertain', ledger.uncertainMessages.size);
    for (const threadId of ledger.deletedThreads) {
      check.count('deleted threads');
      const answer = await send(system.url, token, 'GET', `/v1/threads/${enc(threadId)}`);
      if (answer.status !== 404) check.fail(`${app.id}: deleted thread ${threadId} answered ${answer.status}`);
    }
    check.count('deleted messages', ledger.deletedMessages.size);
    check.count('deleted groups', ledger.deletedGroups.size);
    const leftMessages = await system.sql.query('SELECT external_id FROM conversation.messages WHERE application_id = $1 AND external_id = ANY($2)', [app.id, [...ledger.deletedMessages]]);
    for (const row of leftMessages.rows) check.fail(`${app.id}: deleted message ${row.external_id} still stored`);
    const leftThreads = await system.sql.query('SELECT external_id FROM conversation.threads WHERE application_id = $1 AND external_id = ANY($2)', [app.id, [...ledger.deletedThreads]]);
    for (const row of leftThreads.rows) check.fail(`${app.id}: deleted thread ${row.external_id} still stored`);
    const leftGroups = await system.sql.query('SELECT external_id FROM identity.groups WHERE application_id = $1 AND external_id = ANY($2)', [app.id, [...ledger.deletedGroups]]);
    for (const row of leftGroups.rows) check.fail(`${app.id}: deleted group ${row.external_id} still stored`);
    const groupThreads = await system.sql.query('SELECT external_id FROM conversation.threads WHERE application_id = $1 AND group_id = ANY($2)', [app.id, [...ledger.deletedGroups]]);
    for (const row of groupThreads.rows) check.fail(`${app.id}: thread ${row.external_id} of a deleted group still stored`);
  }
  return check.done();
}

/** Rows marked for a purge that never ran, and deletions identity has not handed on. */
async function checkCascades(system: ProcessSystem, applications: ChaosApplication[]): Promise<Check> {
  const check = new CheckBuilder('cascades finished: nothing left marked for purge, every outbox empty');
  const ids = applications.map(({ app }) => app.id);
  for (const table of ['conversation.threads', 'conversation.messages', 'conversation.files', 'notification.notifications']) {
    const { rows } = await system.sql.query(`SELECT count(*)::int AS n FROM ${table} WHERE application_id = ANY($1) AND purging_at IS NOT NULL`, [ids]);
    check.count(`tables`);
    if (rows[0].n > 0) check.fail(`${table}: ${rows[0].n} rows still marked for purge`);
  }
  const { rows: outboxes } = await system.sql.query<{ schema: string }>(
    `SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'outbox' AND table_type = 'BASE TABLE'`,
  );
  for (const { schema } of outboxes) {
    check.count('outboxes');
    const { rows } = await system.sql.query(`SELECT count(*)::int AS n FROM "${schema}".outbox`);
    if (rows[0].n > 0) check.fail(`${schema}.outbox: ${rows[0].n} entries left`);
  }
  return check.done();
}

/** One event per acknowledged message, one notification per event and recipient. */
async function checkDuplicates(system: ProcessSystem, applications: ChaosApplication[]): Promise<Check> {
  const check = new CheckBuilder('no duplicate rows: one event per message, one notification per cause and recipient');
  for (const { app, ledger } of applications) {
    const { rows } = await system.sql.query<{ message: string; n: number }>(
      `SELECT payload->>'messageID' AS message, count(*)::int AS n FROM webhooks.events
        WHERE application_id = $1 AND type = 'thread-message-added' GROUP BY 1`,
      [app.id],
    );
    const events = new Map(rows.map((row) => [row.message, row.n]));
    for (const id of ledger.messages.keys()) {
      check.count('acknowledged messages');
      const n = events.get(id) ?? 0;
      if (n !== 1) check.fail(`${app.id}: message ${id} has ${n} thread-message-added events`);
    }
    for (const [id, n] of events) if (n > 1) check.fail(`${app.id}: message ${id} has ${n} thread-message-added events`);
    const duplicated = await system.sql.query(
      `SELECT source_id, recipient_id, count(*)::int AS n FROM notification.notifications
        WHERE application_id = $1 AND source_id IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1`,
      [app.id],
    );
    const notifications = await system.sql.query('SELECT count(*)::int AS n FROM notification.notifications WHERE application_id = $1', [app.id]);
    check.count('notifications', notifications.rows[0].n);
    for (const row of duplicated.rows) check.fail(`${app.id}: ${row.n} notifications to ${row.recipient_id} from ${row.source_id}`);
  }
  return check.done();
}

/** Every event the webhooks service recorded reached the receiver (distinct event IDs), and nothing else did. */
async function checkEvents(system: ProcessSystem, applications: ChaosApplication[], receiver: WebhookReceiver, paths: Map<string, string>): Promise<Check> {
  const check = new CheckBuilder('events: every recorded event delivered at least once');
  for (const { app } of applications) {
    const url = `${receiver.url}${paths.get(app.id)}`;
    const { rows } = await system.sql.query<{ event_id: string; status: string }>(
      `SELECT e.id AS event_id, d.status FROM webhooks.events e LEFT JOIN webhooks.deliveries d ON d.event_id = e.id AND d.url = $2
        WHERE e.application_id = $1 AND e.type <> 'url-verification'`,
      [app.id, url],
    );
    const received = receiver.received.filter((request) => request.path === paths.get(app.id) && request.verified);
    const receivedIds = new Set(received.map((request) => request.headers['x-cord-event-id'] as string).filter(Boolean));
    const recorded = new Set(rows.map((row) => row.event_id));
    check.count('recorded events', recorded.size);
    check.count('distinct events received', [...receivedIds].filter((id) => recorded.has(id)).length);
    check.count('requests received', received.length);
    for (const row of rows) {
      if (row.status !== 'succeeded') check.fail(`${app.id}: event ${row.event_id} delivery ${row.status ?? 'not recorded'}`);
      if (!receivedIds.has(row.event_id)) check.fail(`${app.id}: event ${row.event_id} recorded, never received`);
    }
    for (const id of receivedIds) if (!recorded.has(id)) check.fail(`${app.id}: event ${id} received, not recorded`);
    const unverified = receiver.received.filter((request) => request.path === paths.get(app.id) && !request.verified);
    for (const request of unverified) check.fail(`${app.id}: a request the SDK refused: ${request.error}`);
  }
  return check.done();
}

/** The token of a mail's links (mail.mails.link_token), read from its List-Unsubscribe header. */
function linkTokenOf(mail: { parsed: { headerLines: readonly { key: string; line: string }[] } }): string | null {
  const line = mail.parsed.headerLines.find((header) => header.key === 'list-unsubscribe')?.line ?? '';
  const token = /token=([^>&\s]+)/.exec(line)?.[1];
  return token ? decodeURIComponent(token) : null;
}

/** No mail reached the SMTP server twice (per notification and recipient), and every mail marked sent arrived. */
async function checkMails(system: ProcessSystem, applications: ChaosApplication[], smtp: TestSmtpServer): Promise<Check> {
  const check = new CheckBuilder('mail: every mail sent at most once');
  const { rows } = await system.sql.query<{ link_token: string; notification_id: string; recipient_id: string; status: string; late: boolean }>(
    `SELECT link_token, notification_id, recipient_id, status, sent_at > send_after + interval '5 minutes' AS late
       FROM mail.mails WHERE application_id = ANY($1)`,
    [applications.map(({ app }) => app.id)],
  );
  const byToken = new Map(rows.map((row) => [row.link_token, row]));
  for (const row of rows) check.count(`recorded ${row.status}`);
  // Sent over 5 minutes after they were due: their job was lost with Redis and queued again.
  check.count('sent late', rows.filter((row) => row.late).length);
  const times = new Map<string, number>();
  for (const mail of smtp.received) {
    check.count('received');
    const token = linkTokenOf(mail);
    if (!token) check.fail(`a mail to ${mail.rcptTo.join(', ')} without a link token`);
    else times.set(token, (times.get(token) ?? 0) + 1);
  }
  for (const [token, n] of times) {
    const row = byToken.get(token);
    // A mail's row goes with its recipient, thread or group when they are deleted later.
    if (!row) check.count('received, its row deleted since');
    if (n > 1) check.fail(`${row ? `notification ${row.notification_id} to ${row.recipient_id}` : `mail ${token}`} received ${n} times`);
  }
  for (const row of rows) {
    if (row.status === 'pending') check.fail(`mail of notification ${row.notification_id} to ${row.recipient_id} still pending`);
    if (row.status === 'sent' && !times.has(row.link_token)) check.fail(`mail of notification ${row.notification_id} to ${row.recipient_id} marked sent, never received`);
  }
  check.count('distinct received', times.size);
  return check.done();
}

async function checkImports(system: ProcessSystem, state: LoadState): Promise<Check> {
  const check = new CheckBuilder('imports: every acknowledged import completed, the fixture reads as expected');
  const token = await customerToken(system.customer.id, system.customer.secret);
  for (const id of state.imports) {
    check.count('acknowledged');
    const answer = await send(system.url, token, 'GET', `/v1/customer/imports/${id}`);
    if (answer.status !== 200 || answer.body.status !== 'completed')
      check.fail(`import ${id}: ${answer.status} ${answer.body?.status ?? ''} ${answer.body?.error ?? ''}`);
  }
  check.count('uncertain', state.uncertainImports);
  if (state.imports.length > 0) {
    const differences = await replayExpectedReads(system.url);
    check.count('fixture reads compared', expectedReads().length);
    for (const difference of differences.filter((candidate) => candidate.decision === null))
      check.fail(`fixture read ${difference.seq} ${difference.path} at ${difference.at}: expected ${JSON.stringify(difference.expected)}, got ${JSON.stringify(difference.actual)}`);
  }
  return check.done();
}

export async function reconcile(
  system: ProcessSystem,
  state: LoadState,
  receiver: WebhookReceiver,
  paths: Map<string, string>,
  smtp: TestSmtpServer,
): Promise<Check[]> {
  const { applications } = state;
  return [
    await checkUsers(system, applications),
    await checkMessages(system, applications),
    await checkCascades(system, applications),
    await checkDuplicates(system, applications),
    await checkEvents(system, applications, receiver, paths),
    await checkMails(system, applications, smtp),
    await checkImports(system, state),
  ];
}
