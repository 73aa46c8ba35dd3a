/**
 * The chaos run's mixed load and its ledger of what the system answered. Each virtual client owns
 * its groups, threads, messages and visiting users, so what it was told is exact: a write answered
 * 200 (202 for an import) is acknowledged and must be readable after the run; a write answered 4xx
 * was refused and must have left nothing; a write that got a 5xx or no answer at all (a fault) is
 * uncertain: it may or may not have happened, and the reconciliation accepts either.
 *
 * The operations: user upserts (with e-mail addresses, so that mentions send mail), messages
 * mentioning a user (a reply notification, a mail, two webhook events), deletes of a thread, of a
 * group with its threads, and of a user with the messages they wrote (the cascades), and imports
 * of the fixture dump as the system's customer.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { TestApplication } from '../support/client.js';
import { FIXTURE_DUMP } from '../support/imports.js';
import { customerToken, serverToken } from '../support/tokens.js';

/** The users every application has from the start, each with an address of its own. */
export const MEMBERS = ['ann', 'bob', 'carl'] as const;
export const memberEmail = (applicationId: string, userId: string) => `${userId}.${applicationId.slice(0, 8)}@chaos.test`;

export interface MessageRecord {
  threadId: string;
  authorId: string;
  text: string;
}

/** What one application was told. Sets hold external IDs. */
export interface Ledger {
  /** Upserted users (the members included), with the name last acknowledged (null: one of two, the last upsert was not answered). */
  users: Map<string, string | null>;
  uncertainUsers: Set<string>;
  deletedUsers: Set<string>;
  /** Acknowledged messages that nothing acknowledged deleted since. */
  messages: Map<string, MessageRecord>;
  /** Messages that may or may not exist (their create, or a delete that would remove them, was not answered). */
  uncertainMessages: Set<string>;
  /** Acknowledged messages that an acknowledged delete (thread, group, author) removed. */
  deletedMessages: Set<string>;
  /** Threads with at least one acknowledged message whose deletion was not attempted. */
  threads: Set<string>;
  deletedThreads: Set<string>;
  uncertainThreads: Set<string>;
  groups: Set<string>;
  deletedGroups: Set<string>;
  uncertainGroups: Set<string>;
}

export interface ChaosApplication {
  app: TestApplication;
  ledger: Ledger;
}

/** Every answer, with when it came, for the report (5xx inside or outside a fault). */
export interface Answer {
  operation: string;
  status: number;
  at: number;
}

export interface LoadState {
  applications: ChaosApplication[];
  answers: Answer[];
  /** Imports answered 202, by id. */
  imports: string[];
  uncertainImports: number;
}

export const newLedger = (): Ledger => ({
  users: new Map(),
  uncertainUsers: new Set(),
  deletedUsers: new Set(),
  messages: new Map(),
  uncertainMessages: new Set(),
  deletedMessages: new Set(),
  threads: new Set(),
  deletedThreads: new Set(),
  uncertainThreads: new Set(),
  groups: new Set(),
  deletedGroups: new Set(),
  uncertainGroups: new Set(),
});

/** How long a client pauses after a failed request. */
const RETRY_PAUSE_MS = 250;

type Outcome = 'acknowledged' | 'refused' | 'uncertain';
const outcomeOf = (status: number, ok = 200): Outcome => (status === ok ? 'acknowledged' : status >= 400 && status < 500 ? 'refused' : 'uncertain');

/** One HTTP call; status 0 when no answer came (connection refused or reset, or 30 s without one). */
export async function send(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: any }> {
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed };
  } catch {
    return { status: 0, body: null };
  }
}

const enc = encodeURIComponent;
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];
const paragraph = (text: string) => [{ type: 'p', children: [{ text }] }];
const mentioning = (text: string, userId: string) => [
  { type: 'p', children: [{ text: `${text} ` }, { type: 'mention', user: { id: userId }, children: [{ text: `@${userId}` }] }] },
];

/** Creates the application's members and registers nothing: the run registers the webhook. */
export async function seedApplication(baseUrl: string, app: TestApplication): Promise<ChaosApplication> {
  const ledger = newLedger();
  const token = await serverToken(app.id, app.secret);
  for (const id of MEMBERS) {
    const answer = await send(baseUrl, token, 'PUT', `/v1/users/${id}`, { name: id, email: memberEmail(app.id, id) });
    if (answer.status !== 200) throw new Error(`seeding user ${id}: ${answer.status} ${JSON.stringify(answer.body)}`);
    ledger.users.set(id, id);
  }
  return { app, ledger };
}

/** One virtual client of one application: a closed loop of weighted operations until `deadline`. */
async function runClient(baseUrl: string, state: LoadState, { app, ledger }: ChaosApplication, clientNo: number, deadline: () => number): Promise<void> {
  let groupNo = 0;
  let threadNo = 0;
  let group = '';
  /** This client's threads in its current group, and the visiting users it created. */
  let threads: string[] = [];
  const visitors: string[] = [];
  /** Visitors deleted (or whose delete got no answer): now and then one's ID is taken again, as a client may. */
  const gone: string[] = [];
  let visitorNo = 0;
  const prefix = `c${clientNo}-${randomUUID().slice(0, 6)}`;

  async function call(operation: string, method: string, path: string, body?: unknown) {
    const answer = await send(baseUrl, await serverToken(app.id, app.secret), method, path, body);
    state.answers.push({ operation, status: answer.status, at: Date.now() });
    // A client that got no answer or a 5xx pauses before its next request, as Retry-After asks.
    if (answer.status === 0 || answer.status >= 500) await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
    return answer;
  }

  /** Forgets a thread's messages: gone when the delete was acknowledged, uncertain otherwise. */
  function dropThreadMessages(threadIds: Set<string>, outcome: Outcome) {
    for (const [id, message] of ledger.messages) {
      if (!threadIds.has(message.threadId)) continue;
      ledger.messages.delete(id);
      (outcome === 'acknowledged' ? ledger.deletedMessages : ledger.uncertainMessages).add(id);
    }
    for (const threadId of threadIds) {
      ledger.threads.delete(threadId);
      if (outcome === 'acknowledged') ledger.deletedThreads.add(threadId);
      else if (outcome === 'uncertain') ledger.uncertainThreads.add(threadId);
    }
  }

  async function newGroup() {
    const id = `${prefix}-g${++groupNo}`;
    const answer = await call('put group', 'PUT', `/v1/groups/${enc(id)}`, { name: id, members: [...MEMBERS] });
    const outcome = outcomeOf(answer.status);
    if (outcome === 'acknowledged') ledger.groups.add(id);
    else if (outcome === 'uncertain') ledger.uncertainGroups.add(id);
    if (outcome === 'acknowledged') {
      group = id;
      threads = [];
    }
  }

  async function postMessage(threadId: string, authorId: string, content: unknown, text: string) {
    const id = `m-${randomUUID()}`;
    const answer = await call('create message', 'POST', `/v1/threads/${enc(threadId)}/messages`, {
      id,
      authorID: authorId,
      content,
      createThread: { groupID: group, location: { page: threadId }, url: `https://example.com/${threadId}`, name: threadId },
    });
    const outcome = outcomeOf(answer.status);
    if (outcome === 'acknowledged') {
      ledger.messages.set(id, { threadId, authorId, text });
      ledger.threads.add(threadId);
    } else if (outcome === 'uncertain') ledger.uncertainMessages.add(id);
  }

  const operations: [weight: number, run: () => Promise<void>][] = [
    // A member's upsert (a new name) or a new visiting user who then writes a message.
    [15, async () => {
      const reused = gone.length > 0 && Math.random() < 0.3 ? gone.shift()! : null;
      const id = reused ?? (Math.random() < 0.5 ? pick(MEMBERS) : `${prefix}-u${++visitorNo}`);
      const name = `${id} ${randomUUID().slice(0, 4)}`;
      const isVisitor = !(MEMBERS as readonly string[]).includes(id);
      const body = isVisitor ? { name, email: `${id}@chaos.test`, addGroups: [group] } : { name };
      const answer = await call('put user', 'PUT', `/v1/users/${enc(id)}`, body);
      const outcome = outcomeOf(answer.status);
      if (outcome === 'acknowledged') {
        // A deleted user's ID may be taken again: the new user must then be readable.
        ledger.users.set(id, name);
        ledger.deletedUsers.delete(id);
        ledger.uncertainUsers.delete(id);
      }
      // A member exists whatever the answer, with one of two names; a new user may or may not.
      else if (outcome === 'uncertain' && isVisitor) ledger.uncertainUsers.add(id);
      else if (outcome === 'uncertain') ledger.users.set(id, null);
      if (isVisitor && outcome === 'acknowledged') {
        visitors.push(id);
        if (threads.length > 0) await postMessage(pick(threads), id, paragraph(`visit ${name}`), `visit ${name}`);
      }
    }],
    // A message mentioning another member: a reply notification, a mail, two webhook events.
    [40, async () => {
      if (threads.length === 0 || (threads.length < 3 && Math.random() < 0.3)) threads.push(`${group}-t${++threadNo}`);
      const author = pick(MEMBERS);
      const mentioned = pick(MEMBERS.filter((member) => member !== author));
      const text = `note ${randomUUID().slice(0, 8)}`;
      await postMessage(pick(threads), author, mentioning(text, mentioned), `${text} @${mentioned}`);
    }],
    [4, async () => {
      // A thread with an acknowledged message: one that may not exist would answer 404.
      const existing = threads.filter((threadId) => ledger.threads.has(threadId));
      if (existing.length === 0) return;
      const threadId = pick(existing);
      threads.splice(threads.indexOf(threadId), 1);
      const answer = await call('delete thread', 'DELETE', `/v1/threads/${enc(threadId)}`);
      dropThreadMessages(new Set([threadId]), outcomeOf(answer.status));
    }],
    [3, async () => {
      const groupId = group;
      const groupThreads = new Set(threads);
      // Whatever the answer, the client goes on in a new group (the loop creates it).
      group = '';
      threads = [];
      const answer = await call('delete group', 'DELETE', `/v1/groups/${enc(groupId)}`);
      const outcome = outcomeOf(answer.status);
      ledger.groups.delete(groupId);
      if (outcome === 'acknowledged') ledger.deletedGroups.add(groupId);
      else if (outcome === 'uncertain') ledger.uncertainGroups.add(groupId);
      // The group's threads go with it (also those of messages whose create was uncertain).
      for (const [, message] of [...ledger.messages]) if (message.threadId.startsWith(`${groupId}-t`)) groupThreads.add(message.threadId);
      if (outcome !== 'refused') dropThreadMessages(groupThreads, outcome);
    }],
    [4, async () => {
      if (visitors.length === 0) return;
      const userId = visitors.splice(Math.floor(Math.random() * visitors.length), 1)[0];
      const answer = await call('delete user', 'DELETE', `/v1/users/${enc(userId)}`, { permanently_delete: true });
      const outcome = outcomeOf(answer.status);
      if (outcome === 'refused') return;
      gone.push(userId);
      ledger.users.delete(userId);
      (outcome === 'acknowledged' ? ledger.deletedUsers : ledger.uncertainUsers).add(userId);
      // The user's messages go with them.
      for (const [id, message] of ledger.messages) {
        if (message.authorId !== userId) continue;
        ledger.messages.delete(id);
        (outcome === 'acknowledged' ? ledger.deletedMessages : ledger.uncertainMessages).add(id);
      }
    }],
  ];
  const totalWeight = operations.reduce((sum, [weight]) => sum + weight, 0);
  while (Date.now() < deadline()) {
    if (!group) {
      await newGroup();
      if (!group) continue;
    }
    let roll = Math.random() * totalWeight;
    const [, run] = operations.find(([weight]) => (roll -= weight) < 0)!;
    await run();
  }
}

/** Imports the fixture dump as the customer every `everyMs` until `deadline`. */
async function runImports(baseUrl: string, state: LoadState, customer: { id: string; secret: string }, everyMs: number, deadline: () => number) {
  const dump = readFileSync(FIXTURE_DUMP, 'utf8');
  while (Date.now() < deadline()) {
    const answer = await send(baseUrl, await customerToken(customer.id, customer.secret), 'POST', '/v1/customer/imports', dump, 'text/plain');
    state.answers.push({ operation: 'import', status: answer.status, at: Date.now() });
    const outcome = outcomeOf(answer.status, 202);
    if (outcome === 'acknowledged') state.imports.push(answer.body.importID);
    else if (outcome === 'uncertain') state.uncertainImports++;
    const next = Date.now() + everyMs;
    while (Date.now() < Math.min(next, deadline())) await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Runs the load until `deadline()` (read as it goes): `clients` clients per application and one importer. */
export async function runLoad(
  baseUrl: string,
  state: LoadState,
  customer: { id: string; secret: string },
  options: { clients: number; importEveryMs: number; deadline: () => number },
): Promise<void> {
  await Promise.all([
    ...state.applications.flatMap((application) =>
      Array.from({ length: options.clients }, (_, index) => runClient(baseUrl, state, application, index, options.deadline)),
    ),
    runImports(baseUrl, state, customer, options.importEveryMs, options.deadline),
  ]);
}
