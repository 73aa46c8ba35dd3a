/**
 * Scenario 1, the five calls customers make most: `GET /v1/users/<ID>`, `GET /v1/users?limit=200`,
 * `GET /v1/threads/<ID>/messages` (100 messages), `PUT /v1/users/<ID>` (name and email) and
 * `POST /v1/threads/<ID>/messages` (into existing threads, and with `createThread`), through the
 * gateway at 10 connections and at BENCH_CONNECTIONS (50), each beside its baselines from the same
 * run: the owning service called directly with the internal headers (what the gateway costs), the
 * same statements from a plain `pg` script (what PostgreSQL can do; statements.ts; through the services' pg client, so
 * prepared as theirs are), and for the two
 * single-user calls a bare node:http server over a pg pool (what one Node process can do). Every
 * measurement also gives the CPU time per request of each process, steadier than req/s on a shared
 * machine and what shows where the time goes.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INTERNAL_HEADERS } from '@collab/shared';
import { outboxChannel } from '@collab/shared/storage';
import type pg from 'pg';
import { internalHeaders, messageBody } from '../api.js';
import {
  cpuPerRequest,
  describeCpu,
  describeCpuPerRequest,
  measure,
  measureSql,
  outboxBacklog,
  rotate,
  seedConversations,
  type ExtraProcess,
  type Harness,
  type Measured,
  type Scenario,
} from '../harness.js';
import { describeLoad, type HttpLoad } from '../load.js';
import { explain } from '../profile.js';
import { fmt, type Row, type Section } from '../report.js';
import { until } from '@collab/shared/devkit';
import { CONVERSATION, IDENTITY } from '../statements.js';

const USERS = 200;
const THREAD_LENGTH = 100;
/** Message creates go round-robin over this many threads: one thread would serialize them on its row lock. */
const WRITE_THREADS = 100;
const MODERATE_CONNECTIONS = 10;
/** Name (and so page and URL) of the threads the createThread loads make. */
const NEW_THREAD_NAME = 'new-thread';

/** Through the gateway against direct, on GET user: the gateway costs at most 15 % of throughput. */
const GATEWAY_THROUGHPUT_TARGET = 0.85;
/** The gateway's CPU per proxied request against the owning service's. */
const GATEWAY_CPU_TARGET = 0.3;
/** The earlier gateway target, kept: at most 2 ms added at p50 at moderate concurrency. */
const GATEWAY_P50_TARGET_MS = 2;
const BARE_SERVER_TARGET = 0.5;
const RAW_SQL_TARGET = 0.6;
/** p99 against p50 at BENCH_CONNECTIONS. */
const TAIL_TARGET = 3;
/**
 * Message create, the call customers make most, is held to more: ≥ 0.8× its raw SQL, and p99 ≤ 2×
 * p50 at every concurrency measured.
 */
const CREATE_TARGETS: CallTargets = { throughput: 0.8, tail: 2, tailAtEveryConcurrency: true };
/** Longest wait for the relay to hand over the events of a message-create load. */
const DRAIN_TIMEOUT_MS = 600_000;

type Query = <R extends pg.QueryResultRow>(text: string, params?: unknown[]) => Promise<R[]>;

/**
 * Issues statements as the services' pools do (a transaction on one connection, everything else
 * on any), and counts them, BEGIN and COMMIT included.
 */
class Script {
  statements = 0;

  constructor(private readonly pool: pg.Pool) {}

  readonly query: Query = async (text, params) => {
    this.statements += 1;
    return (await this.pool.query(text, params)).rows;
  };

  async transaction<T>(work: (query: Query) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const query: Query = async (text, params) => {
      this.statements += 1;
      return (await client.query(text, params)).rows;
    };
    try {
      await query('START TRANSACTION');
      const result = await work(query);
      await query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

/** A call's own section-1 targets, where they are stricter than the others'. */
interface CallTargets {
  /** Throughput against its baseline. */
  throughput: number;
  /** p99 ÷ p50. */
  tail: number;
  /** The tail target holds at every concurrency, not at BENCH_CONNECTIONS only. */
  tailAtEveryConcurrency: boolean;
}

interface Call {
  name: string;
  owner: 'identity' | 'conversation';
  /** The request, without where it goes and how many connections. */
  load: Pick<HttpLoad, 'method' | 'path' | 'body' | 'bodyPerRequest'>;
  /** The same statements from the plain `pg` script. */
  sql: () => Promise<void>;
  /** Also served by the bare node:http server, whose rate is then the target's baseline. */
  bare: boolean;
  /** The gateway's throughput against direct is a target for this call. */
  gatewayTarget: boolean;
  /** The earlier gateway targets hold for this call at moderate concurrency (≤ 15 % of throughput, ≤ +2 ms at p50). */
  earlierGatewayTargets: boolean;
  /** Records an event per request, which the conversation worker's relay hands over afterwards. */
  recordsEvents: boolean;
  /** Stricter section-1 targets than the others'. */
  targets?: CallTargets;
}

interface Measurements {
  gateway: Measured;
  direct: Measured | null;
  sql: Measured;
  bare: Measured | null;
  /** Through a bare node:http proxy instead of the gateway (GET user only). */
  proxy: Measured | null;
}

/** The baseline process names: they are also the rows' and notes' names. */
const BARE_SERVER = 'bare node:http';
const BARE_PROXY = 'bare node:http proxy';

/**
 * A baseline server in its own process (`script` in bench/src, compiled), on a free port it
 * reports over IPC; stopped once measured.
 */
async function startBaseline(script: string, name: string, args: string[]): Promise<{ url: string; process: ExtraProcess; stop(): Promise<void> }> {
  const child = fork(join(dirname(fileURLToPath(import.meta.url)), '..', script), args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: { port: number }) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`the ${name} exited (${code}) before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    process: { name, pid: child.pid! },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A difference in ms with its sign. */
const signedMs = (value: number) => `${value < 0 ? '−' : '+'}${fmt.ms(Math.abs(value))}`;
const latencies = (measured: Measured) => `${fmt.ms(measured.p50)} / ${fmt.ms(measured.p99)}`;

/** CPU time per request of one process in a measurement (0 when it used none). */
function processMs(measured: Measured, name: string): number {
  return cpuPerRequest(measured)?.find((p) => p.name === name)?.ms ?? 0;
}

/** Section 1: the call against what PostgreSQL and one Node process can do, and its tail. */
function callRows(call: Call, label: string, atBenchConnections: boolean, m: Measurements): Row[] {
  const [baseline, baselineName, defaultTarget] = m.bare ? [m.bare, 'bare node:http + pg', BARE_SERVER_TARGET] : [m.sql, 'raw SQL', RAW_SQL_TARGET];
  const target = call.targets?.throughput ?? defaultTarget;
  const tailTarget = call.targets?.tail ?? TAIL_TARGET;
  const tailMeasured = atBenchConnections || call.targets?.tailAtEveryConcurrency === true;
  const ratio = m.gateway.rps / baseline.rps;
  const tail = m.gateway.p99 / m.gateway.p50;
  return [
    {
      figure: `${label}: throughput`,
      value: fmt.rps(m.gateway.rps),
      baseline: `${fmt.rps(baseline.rps)} ${baselineName}`,
      ratio: fmt.ratio(ratio),
      target: `≥ ${fmt.ratio(target)}`,
      met: ratio >= target,
    },
    ...(m.bare
      ? [
          {
            figure: `${label}: throughput against raw SQL`,
            value: fmt.rps(m.gateway.rps),
            baseline: `${fmt.rps(m.sql.rps)} raw SQL`,
            ratio: fmt.ratio(m.gateway.rps / m.sql.rps),
            target: '—',
            met: null,
          },
        ]
      : []),
    {
      figure: `${label}: p50 / p99 (ratio: p99 ÷ p50)`,
      value: latencies(m.gateway),
      baseline: [m.bare && `bare ${latencies(m.bare)}`, `raw SQL ${latencies(m.sql)}`].filter(Boolean).join('; '),
      ratio: fmt.ratio(tail),
      target: tailMeasured ? `p99 ≤ ${fmt.ratio(tailTarget)} p50` : '—',
      met: tailMeasured ? tail <= tailTarget : null,
    },
  ];
}

/** Section 2: the gateway against the owning service called directly, in throughput, latency and CPU. */
function gatewayRows(call: Call, label: string, moderate: boolean, m: Measurements & { direct: Measured }): Row[] {
  const throughputTarget = call.gatewayTarget || (call.earlierGatewayTargets && moderate);
  const ratio = m.gateway.rps / m.direct.rps;
  const out: Row[] = [
    {
      figure: `${label}: throughput`,
      value: fmt.rps(m.gateway.rps),
      baseline: `${fmt.rps(m.direct.rps)} direct to ${call.owner}`,
      ratio: fmt.ratio(ratio),
      target: throughputTarget ? `≥ ${fmt.ratio(GATEWAY_THROUGHPUT_TARGET)}` : '—',
      met: throughputTarget ? ratio >= GATEWAY_THROUGHPUT_TARGET : null,
    },
  ];
  const p50Target = call.earlierGatewayTargets && moderate;
  const added = m.gateway.p50 - m.direct.p50;
  out.push({
    figure: `${label}: p50 / p99`,
    value: latencies(m.gateway),
    baseline: `${latencies(m.direct)} direct`,
    ratio: `${signedMs(added)} / ${signedMs(m.gateway.p99 - m.direct.p99)}`,
    target: p50Target ? `p50 ≤ +${fmt.ms(GATEWAY_P50_TARGET_MS)}` : '—',
    met: p50Target ? added <= GATEWAY_P50_TARGET_MS : null,
  });
  if (m.proxy?.cpu) {
    const proxy = processMs(m.proxy, BARE_PROXY);
    const owner = processMs(m.proxy, call.owner);
    out.push({
      figure: `${label}: CPU per request of a bare node:http proxy (the floor under the gateway's)`,
      value: `${fmt.ms(proxy)} proxy, ${fmt.ms(owner)} ${call.owner} behind it`,
      baseline: `gateway ${fmt.ms(processMs(m.gateway, 'gateway'))}`,
      ratio: `proxy ${fmt.ratio(proxy / owner)} ${call.owner}`,
      target: '—',
      met: null,
    });
  }
  if (m.gateway.cpu) {
    const gateway = processMs(m.gateway, 'gateway');
    const owner = processMs(m.gateway, call.owner);
    const share = gateway / owner;
    // The table names the processes the call goes through; the notes list every process.
    const named = ['gateway', 'identity', 'conversation', 'postgres', 'redis'];
    out.push({
      figure: `${label}: CPU per request`,
      value: describeCpuPerRequest(m.gateway, named),
      baseline: m.direct.cpu ? `direct: ${describeCpuPerRequest(m.direct, named)}` : 'n/a',
      ratio: `gateway ${fmt.ratio(share)} ${call.owner}`,
      target: `gateway ≤ ${fmt.ratio(GATEWAY_CPU_TARGET)} ${call.owner}`,
      met: owner > 0 ? share <= GATEWAY_CPU_TARGET : null,
    });
  }
  return out;
}

export const fiveCalls: Scenario = {
  key: 'calls',
  async run(harness: Harness): Promise<Section[]> {
    const { system } = harness;
    const connectionCounts = [...new Set([MODERATE_CONNECTIONS, harness.connections])];
    const tailConnections = Math.max(...connectionCounts);
    const timing = `${harness.seconds} s each after ${harness.warmupSeconds} s of warm-up`;
    const baselines: Section = {
      title: '1. The five calls',
      method:
        `Through the gateway with a server token, at ${connectionCounts.join(' and ')} connections, ${timing}, in an application ` +
        `of ${USERS} users in one group: \`GET /v1/users/<ID>\`; \`GET /v1/users?limit=${USERS}\`; \`GET /v1/threads/<ID>/messages\` ` +
        `of a thread of ${THREAD_LENGTH} messages; \`PUT /v1/users/<ID>\` with a new name and email each time (round-robin over the ` +
        `users); \`POST /v1/threads/<ID>/messages\` round-robin over ${WRITE_THREADS} threads, and with \`createThread\` (a new ` +
        `thread each time). Baselines from the same run: the same statements from a plain \`pg\` script, as many concurrent loops ` +
        `on as many connections (what PostgreSQL can do; bench/src/statements.ts lists them, the notes count them); for GET and PUT ` +
        `user, a bare \`node:http\` server doing the same lookup over a \`pg\` pool of identity's size (what one Node process can ` +
        `do). Both talk to PostgreSQL through the services' own client, so their statements are prepared as the services' are ` +
        `(DB_PREPARED_STATEMENTS). Targets: throughput ≥ ${fmt.ratio(BARE_SERVER_TARGET)} the bare server (GET and PUT user) or ≥ ` +
        `${fmt.ratio(RAW_SQL_TARGET)} the raw SQL (the others); p99 ≤ ${fmt.ratio(TAIL_TARGET)} p50 at ${tailConnections} connections. ` +
        `Message create, the call customers make most: ≥ ${fmt.ratio(CREATE_TARGETS.throughput)} the raw SQL and p99 ≤ ` +
        `${fmt.ratio(CREATE_TARGETS.tail)} p50 at every concurrency.`,
      rows: [],
      notes: [],
    };
    const gatewayCost: Section = {
      title: '2. Gateway cost and CPU per request',
      method:
        `The loads of section 1 through the gateway against the owning service called directly with the internal headers the ` +
        `gateway adds (${timing}), and the CPU time per request of every process: its CPU time (utime + stime from /proc) over ` +
        `the measurement divided by the requests served. "postgres" is every PostgreSQL process but the backends of other ` +
        `databases, "redis" every redis-server process (shared with whatever else uses it), "bench" the load generator (or the ` +
        `SQL script); the total leaves out bench and other databases. Targets: through the gateway ≥ ` +
        `${fmt.ratio(GATEWAY_THROUGHPUT_TARGET)} direct on GET user, and the gateway's CPU per request ≤ ` +
        `${fmt.ratio(GATEWAY_CPU_TARGET)} the owning service's; the earlier gateway targets stay (≥ ` +
        `${fmt.ratio(GATEWAY_THROUGHPUT_TARGET)} of throughput and ≤ +${fmt.ms(GATEWAY_P50_TARGET_MS)} at p50 on GET user and ` +
        `message create, at ${MODERATE_CONNECTIONS} connections). For GET user also through a ${BARE_PROXY} (bench/src/bare-proxy.ts) ` +
        `that adds the same internal headers and nothing else: the least CPU per request forwarding costs one Node process.`,
      rows: [],
      notes: [],
    };

    const seeded = await seedConversations(harness, 'bench five calls', USERS, 1 + WRITE_THREADS);
    const { app, groupId, userIds } = seeded;
    const [author] = userIds;
    const [readThread, ...writeThreads] = seeded.threadIds;
    for (let i = 1; i < THREAD_LENGTH; i++) await app.api.ok('POST', `/v1/threads/${readThread}/messages`, messageBody(author, `message ${i}`));

    const script = new Script(system.sql);
    const { query } = script;
    const appId = app.id;
    const content = messageBody(author, 'hello').content;
    // A counter per run: the PUT bodies differ from every earlier one, and created threads never collide.
    const runTag = randomUUID().slice(0, 8);
    let sequence = 0;
    const next = () => `${runTag}-${sequence++}`;
    const newThreadId = () => `new-${next()}`;
    const nextUser = rotate(userIds);
    const nextWriteThread = rotate(writeThreads);
    const newNameAndEmail = () => {
      const tag = next();
      return { name: `User ${tag}`, email: `user-${tag}@example.com` };
    };

    /** The create's statements after the thread read, shared by both kinds of create. */
    const createInThread = async (threadId: string, existing: boolean) => {
      await query(IDENTITY.lookup, [appId, [author], groupId]);
      await script.transaction(async (tx) => {
        let thread: { internalId: string };
        if (existing) [thread] = await tx(CONVERSATION.lockThread, [appId, threadId]);
        else {
          const name = NEW_THREAD_NAME;
          [thread] = await tx(CONVERSATION.insertThread, [appId, threadId, groupId, name, `https://example.com/${name}`, JSON.stringify({ page: name }), '{}', null]);
          await tx(CONVERSATION.subscribe, [thread.internalId, [author], true]);
        }
        const [message] = await tx<{ internalId: string }>(...CONVERSATION.insertMessage(appId, thread.internalId, author, content));
        const payload = { messageId: message.internalId, linkBase: system.url, recipients: [] };
        await tx(CONVERSATION.outboxRecordWithSeen, [
          ...[randomUUID(), appId, 'message.added', JSON.stringify(payload), randomUUID(), 0, outboxChannel('conversation')],
          ...[thread.internalId, [author], true],
        ]);
      });
    };

    const createBody = messageBody(author, 'hello');
    const calls: Call[] = [
      {
        name: 'GET user',
        owner: 'identity',
        load: { path: `/v1/users/${author}` },
        sql: async () => void (await query(IDENTITY.findUserWithGroupIds, [appId, author])),
        bare: true,
        gatewayTarget: true,
        earlierGatewayTargets: true,
        recordsEvents: false,
      },
      {
        name: `list ${USERS} users`,
        owner: 'identity',
        load: { path: `/v1/users?limit=${USERS}` },
        // The page asks one row more than the limit, to know whether another page follows.
        sql: async () => void (await Promise.all([query(IDENTITY.listUsers, [appId, null, null, USERS + 1, null]), query(IDENTITY.countUsers, [appId, null, null])])),
        bare: false,
        gatewayTarget: false,
        earlierGatewayTargets: false,
        recordsEvents: false,
      },
      {
        name: `thread read (${THREAD_LENGTH} messages)`,
        owner: 'conversation',
        load: { path: `/v1/threads/${readThread}/messages` },
        sql: async () => {
          const [thread] = await query<{ internalId: string }>(CONVERSATION.findThread, [appId, readThread]);
          const messages = await query<{ internalId: string }>(CONVERSATION.threadMessages, [appId, thread.internalId]);
          await query(CONVERSATION.viewDetails, [messages.map((message) => message.internalId), [thread.internalId]]);
        },
        bare: false,
        gatewayTarget: false,
        earlierGatewayTargets: false,
        recordsEvents: false,
      },
      {
        name: 'update user',
        owner: 'identity',
        load: { method: 'PUT', path: () => `/v1/users/${nextUser()}`, bodyPerRequest: newNameAndEmail },
        sql: async () => {
          const { name, email } = newNameAndEmail();
          await query(IDENTITY.upsertNameAndEmail, [appId, nextUser(), name, email]);
        },
        bare: true,
        gatewayTarget: false,
        earlierGatewayTargets: false,
        recordsEvents: false,
      },
      {
        name: 'message create',
        owner: 'conversation',
        load: { method: 'POST', path: () => `/v1/threads/${nextWriteThread()}/messages`, body: createBody },
        sql: async () => {
          const threadId = nextWriteThread();
          await query(CONVERSATION.findThread, [appId, threadId]);
          await createInThread(threadId, true);
        },
        bare: false,
        gatewayTarget: false,
        earlierGatewayTargets: true,
        recordsEvents: true,
        targets: CREATE_TARGETS,
      },
      {
        name: 'message create with createThread',
        owner: 'conversation',
        load: {
          method: 'POST',
          path: () => `/v1/threads/${newThreadId()}/messages`,
          body: messageBody(author, 'hello', { groupID: groupId, name: NEW_THREAD_NAME }),
        },
        sql: async () => {
          const threadId = newThreadId();
          await query(CONVERSATION.findThread, [appId, threadId]);
          await createInThread(threadId, false);
        },
        bare: false,
        gatewayTarget: false,
        earlierGatewayTargets: false,
        recordsEvents: true,
      },
    ];

    // Statements per call of the script: one call each, counted.
    const counts: string[] = [];
    for (const call of calls) {
      const before = script.statements;
      await call.sql();
      counts.push(`${call.name} ${script.statements - before}`);
    }
    baselines.notes.push(`Statements per call of the raw-SQL script (a transaction's BEGIN and COMMIT included): ${counts.join(', ')}.`);

    const { direct } = system;
    if (!direct)
      gatewayCost.notes.push(
        'Not measured: the services of a running system are reachable only with BENCH_INTERNAL_TOKEN, BENCH_IDENTITY_URL and BENCH_CONVERSATION_URL.',
      );
    /**
     * The next measurement must not pay for the events of a message-create load, which the
     * conversation worker's relay hands over after it: wait until it has (not measured).
     */
    const settle = async (call: Call) => {
      if (!call.recordsEvents) return;
      const started = performance.now();
      const backlog = await outboxBacklog(harness);
      await until(async () => (await outboxBacklog(harness)) === 0, 'the conversation outbox to drain', DRAIN_TIMEOUT_MS, 100);
      harness.log(`relayed a backlog of ${backlog} events in ${fmt.s((performance.now() - started) / 1000)}`);
    };
    /** A baseline server runs only while measured (the bare server's pool counts against max_connections). */
    const measureBaseline = async (
      label: string,
      baseline: Awaited<ReturnType<typeof startBaseline>>,
      load: Omit<HttpLoad, 'seconds' | 'baseUrl'>,
    ) => {
      try {
        return await measure(harness, label, { ...load, baseUrl: baseline.url }, [baseline.process]);
      } finally {
        await baseline.stop();
      }
    };
    const kinds = { gateway: 'via the gateway', direct: 'direct', sql: 'raw SQL', bare: BARE_SERVER, proxy: `through a ${BARE_PROXY}` } as const;
    for (const connections of connectionCounts) {
      for (const call of calls) {
        const label = `${call.name}, ${connections} conn.`;
        const load = { ...call.load, connections };
        const gateway = await measure(harness, `${label} via gateway`, { ...load, baseUrl: system.url, headers: app.api.headers });
        await settle(call);
        let directMeasured: Measured | null = null;
        if (direct) {
          directMeasured = await measure(harness, `${label} direct`, { ...load, baseUrl: direct[call.owner], headers: internalHeaders(direct.internalToken, appId) });
          await settle(call);
        }
        const bare = call.bare
          ? await measureBaseline(`${label}, ${BARE_SERVER}`, await startBaseline('bare-server.js', BARE_SERVER, [system.databaseUrl, INTERNAL_HEADERS.applicationId]), {
              ...load,
              headers: { [INTERNAL_HEADERS.applicationId]: appId },
            })
          : null;
        const proxy =
          call.gatewayTarget && direct
            ? await measureBaseline(`${label}, ${BARE_PROXY}`, await startBaseline('bare-proxy.js', BARE_PROXY, [direct[call.owner], direct.internalToken, appId]), load)
            : null;
        const sql = await measureSql(harness, `${label}, raw SQL`, connections, call.sql);
        await settle(call);
        const measured: Measurements = { gateway, direct: directMeasured, sql, bare, proxy };
        baselines.rows.push(...callRows(call, label, connections === tailConnections, measured));
        if (measured.direct) gatewayCost.rows.push(...gatewayRows(call, label, connections === MODERATE_CONNECTIONS, { ...measured, direct: measured.direct }));
        for (const kind of Object.keys(kinds) as (keyof Measurements)[]) {
          const stats = measured[kind];
          if (stats?.cpu)
            gatewayCost.notes.push(`${label}, ${kinds[kind]}: ${describeLoad(stats)}; CPU per request ${describeCpuPerRequest(stats)}; ${describeCpu(stats.cpu)}.`);
        }
      }
    }

    // Plans as they are once autovacuum has caught up with the load's writes.
    // One table a statement: with a database per service, each statement reaches one service's database.
    for (const table of ['identity.users', 'conversation.messages', 'conversation.threads', 'conversation.thread_participants', 'identity.group_members'])
      await system.sql.query(`ANALYZE ${table}`);
    const [readInternal] = await query<{ internalId: string }>(CONVERSATION.findThread, [appId, readThread]);
    const [writeInternal] = await query<{ internalId: string }>(CONVERSATION.findThread, [appId, writeThreads[0]]);
    const readIds = (await query<{ internalId: string }>(CONVERSATION.threadMessages, [appId, readInternal.internalId])).map((row) => row.internalId);
    harness.appendix.push(
      '## Query plans of the hot paths',
      '',
      'EXPLAIN (ANALYZE, BUFFERS) after the loads of section 1, on their data, with fresh statistics (writes rolled back).',
      '',
      ...(await explain(system.sql, 'GET user: the user with its groups', IDENTITY.findUserWithGroupIds, [appId, author])),
      ...(await explain(system.sql, `list ${USERS} users: the page`, IDENTITY.listUsers, [appId, null, null, USERS + 1, null])),
      ...(await explain(system.sql, 'thread read: messages of the thread', CONVERSATION.threadMessages, [appId, readInternal.internalId])),
      ...(await explain(system.sql, "thread read: the messages' details", CONVERSATION.viewDetails, [readIds, [readInternal.internalId]])),
      ...(await explain(system.sql, 'message create: seen-by (markSeen)', CONVERSATION.markSeen, [writeInternal.internalId, [author], true])),
      ...(await explain(system.sql, 'message create: insert with the thread activity (insertWithActivity)', ...CONVERSATION.insertMessage(appId, writeInternal.internalId, author, content))),
      ...(await explain(system.sql, "message create: identity's lookup of the author and the group", IDENTITY.lookup, [appId, [author], groupId])),
    );
    return [baselines, gatewayCost];
  },
};
