/**
 * deploy/grafana/collab-backend.json against a running system: every process `npm start` runs is
 * started from the build (scripts/processes.mjs) with its own metrics port, some traffic goes
 * through the gateway (users, a message with a link and a registered webhook, so that link
 * previews are fetched and a delivery is sent), then every process's /metrics is scraped. Each
 * metric the dashboard's PromQL queries name must be exported by some process, and each label they
 * match on or group by must be on that metric's samples (or be one Prometheus adds to every target:
 * job, instance). Needs `npm run build` first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteRedisPrefix, dropDatabase, freePort, until } from '@collab/shared/devkit';
import { html, PageServer } from '../previews/page-server.js';
import { request } from '../support/client.js';
import { processes, ROOT } from '../support/process-catalog.js';
import { migrateAll } from '../support/system.js';
import { customerToken, serverToken } from '../support/tokens.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const DASHBOARD_FILE = join(ROOT, 'deploy', 'grafana', 'collab-backend.json');

type Doc = Record<string, any>;

/** Labels Prometheus adds to every sample of a target; the processes do not export them. */
const TARGET_LABELS = new Set(['job', 'instance']);

/** PromQL words that are not metric names when they appear outside a function call. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'group_left', 'group_right', 'inf', 'nan']);

interface QueryUse {
  /** Each metric (sample name) the query selects, with the labels its matchers name. */
  selectors: { metric: string; labels: string[] }[];
  /** Labels of by/without/on/ignoring/group_left/group_right clauses. */
  grouping: string[];
}

/**
 * The metric names and label names a PromQL expression uses: selectors `name{label="…"}`,
 * grouping clauses, and Grafana's `label_values(metric, label)`. Range durations and Grafana
 * variables in them (`[$__rate_interval]`) are dropped first, and label values are never read
 * as names.
 */
function queryUse(expr: string): QueryUse {
  const labelValues = /^\s*label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$/.exec(expr);
  if (labelValues) return { selectors: [{ metric: labelValues[1], labels: [labelValues[2]] }], grouping: [] };
  let text = expr.replace(/\[[^\]]*\]/g, '');
  const matchers: string[][] = [];
  // Matchers first, so that their quoted values (".*-purge", "5..") are never read as names.
  text = text.replace(/\{([^}]*)\}/g, (_all, body: string) => {
    const labels = [...body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"/g)].map((m) => m[1]);
    matchers.push(labels);
    return ` @${matchers.length - 1} `;
  });
  if (/"/.test(text)) throw new Error(`a string outside label matchers is not read here: ${expr}`);
  const grouping: string[] = [];
  text = text.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_all, list: string) => {
    grouping.push(...list.split(',').map((label) => label.trim()).filter(Boolean));
    return ' ';
  });
  const selectors: QueryUse['selectors'] = [];
  for (const match of text.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*@(\d+))?(\s*\()?/g)) {
    const [, name, , matcherIndex, call] = match;
    if (call || KEYWORDS.has(name.toLowerCase())) continue;
    selectors.push({ metric: name, labels: matcherIndex === undefined ? [] : matchers[Number(matcherIndex)] });
  }
  return { selectors, grouping };
}

/** Every sample name of a scrape, with the label names seen on its samples. */
function exportedMetrics(scrapes: string[]): Map<string, Set<string>> {
  const metrics = new Map<string, Set<string>>();
  for (const text of scrapes)
    for (const line of text.split('\n')) {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s/.exec(line);
      if (!match) continue;
      const labels = metrics.get(match[1]) ?? new Set<string>();
      for (const label of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(label[1]);
      metrics.set(match[1], labels);
    }
  return metrics;
}

/** What a query uses that the processes do not export. */
function queryProblems(expr: string, exported: Map<string, Set<string>>): string[] {
  const problems: string[] = [];
  const use = queryUse(expr);
  if (use.selectors.length === 0) problems.push(`selects no metric: ${expr}`);
  for (const { metric, labels } of use.selectors) {
    const has = exported.get(metric);
    if (!has) {
      problems.push(`${metric} is not exported (in ${expr})`);
      continue;
    }
    for (const label of labels) if (!has.has(label) && !TARGET_LABELS.has(label)) problems.push(`${metric} has no label ${label} (in ${expr})`);
  }
  for (const label of use.grouping)
    if (!TARGET_LABELS.has(label) && !use.selectors.some(({ metric }) => exported.get(metric)?.has(label)))
      problems.push(`no metric of the query has label ${label} (in ${expr})`);
  return problems;
}

/** Every PromQL query of the dashboard: panel targets (rows included) and template variables. */
function dashboardQueries(dashboard: Doc): { where: string; expr: string }[] {
  const queries: { where: string; expr: string }[] = [];
  const walk = (panels: Doc[]) => {
    for (const panel of panels) {
      for (const target of panel.targets ?? []) queries.push({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr });
      walk(panel.panels ?? []);
    }
  };
  walk(dashboard.panels ?? []);
  for (const variable of dashboard.templating?.list ?? [])
    if (variable.type === 'query') queries.push({ where: `variable ${variable.name}`, expr: variable.query?.query ?? variable.query });
  return queries;
}

const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Doc;

describe('reading PromQL', () => {
  it('finds the metrics, matcher labels and grouping labels of a query, not label values or functions', () => {
    expect(
      queryUse('histogram_quantile(0.99, sum by (le, job) (rate(http_request_duration_seconds_bucket{status=~"5..", route!="x"}[$__rate_interval])))'),
    ).toEqual({ selectors: [{ metric: 'http_request_duration_seconds_bucket', labels: ['status', 'route'] }], grouping: ['le', 'job'] });
    expect(queryUse('sum(rate(a_total[5m])) / on (queue) group_left b')).toEqual({
      selectors: [
        { metric: 'a_total', labels: [] },
        { metric: 'b', labels: [] },
      ],
      grouping: ['queue'],
    });
    expect(queryUse('label_values(process_resident_memory_bytes, job)')).toEqual({
      selectors: [{ metric: 'process_resident_memory_bytes', labels: ['job'] }],
      grouping: [],
    });
  });

  it('flags a metric that is not exported and a label a metric does not carry', () => {
    const exported = exportedMetrics(['# HELP x\nhttp_request_duration_seconds_count{route="/v1/users",method="GET",status="200"} 3\n']);
    expect(queryProblems('sum by (route) (rate(http_request_duration_seconds_count{job="gateway"}[1m]))', exported)).toEqual([]);
    expect(queryProblems('rate(http_requests_total[1m])', exported)).toEqual(['http_requests_total is not exported (in rate(http_requests_total[1m]))']);
    expect(queryProblems('sum by (path) (http_request_duration_seconds_count{code="200"})', exported)).toEqual([
      'http_request_duration_seconds_count has no label code (in sum by (path) (http_request_duration_seconds_count{code="200"}))',
      'no metric of the query has label path (in sum by (path) (http_request_duration_seconds_count{code="200"}))',
    ]);
  });
});

describe('deploy/grafana/collab-backend.json', () => {
  it('is a dashboard whose panels each query Prometheus through the datasource variable', () => {
    expect(dashboard.uid).toBe('collab-backend');
    const panels = (dashboard.panels as Doc[]).filter((panel) => panel.type !== 'row');
    expect(panels.length).toBeGreaterThan(0);
    const ids = (dashboard.panels as Doc[]).map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of panels) {
      expect(panel.datasource, panel.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets) expect(target.expr, panel.title).toMatch(/\S/);
    }
    expect(dashboard.templating.list.find((v: Doc) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
  });

  it('covers requests, queues and jobs, webhooks, purges, database pools, event-loop lag and memory', () => {
    const used = new Set(dashboardQueries(dashboard).flatMap(({ expr }) => queryUse(expr).selectors.map((s) => s.metric)));
    for (const metric of [
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_bucket',
      'bullmq_queue_jobs',
      'bullmq_jobs_completed_total',
      'bullmq_jobs_failed_total',
      'outbox_entries_pending',
      'outbox_entries_failed',
      'webhook_deliveries_total',
      'webhook_delivery_duration_seconds_bucket',
      'db_pool_connections_total',
      'db_pool_clients_waiting',
      'nodejs_eventloop_lag_p99_seconds',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ])
      expect(used, metric).toContain(metric);
  });
});

describe('the dashboard against a running system', () => {
  const children: { name: string; child: ChildProcess; metricsPort: number; output: string[] }[] = [];
  const databaseName = `collab_test_dashboard_${randomBytes(6).toString('hex')}`;
  const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redisPrefix = `test-dashboard-${randomBytes(6).toString('hex')}`;
  const customer = { id: randomUUID(), secret: randomBytes(32).toString('hex') };
  let gatewayUrl = '';
  let receiver: WebhookReceiver;
  let pages: PageServer;
  let appSecret = '';

  beforeAll(async () => {
    const databaseUrl = new URL(serverUrl);
    databaseUrl.pathname = `/${databaseName}`;
    await migrateAll(databaseUrl.toString());
    const [gateway, identity, conversation, notification, webhooks, mail] = await Promise.all(Array.from({ length: 6 }, () => freePort()));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl.toString(),
      REDIS_URL: redisUrl,
      REDIS_PREFIX: redisPrefix,
      INTERNAL_TOKEN: randomBytes(32).toString('hex'),
      ACCESS_TOKEN_SECRET: randomBytes(32).toString('hex'),
      FILE_URL_SECRET: randomBytes(32).toString('hex'),
      SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      CUSTOMER_ID: customer.id,
      CUSTOMER_SECRET: customer.secret,
      PORT: String(gateway),
      IDENTITY_PORT: String(identity),
      CONVERSATION_PORT: String(conversation),
      NOTIFICATION_PORT: String(notification),
      WEBHOOKS_PORT: String(webhooks),
      MAIL_PORT: String(mail),
      // The page server and the webhook receiver listen on loopback.
      OUTBOUND_ALLOWED_CIDRS: '127.0.0.0/8',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    };
    for (const entry of processes(env)) {
      const metricsPort = await freePort();
      const child = spawn(process.execPath, [entry.script], { env: { ...env, ...entry.env, METRICS_PORT: String(metricsPort) }, stdio: ['ignore', 'pipe', 'pipe'] });
      const output: string[] = [];
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
      children.push({ name: entry.name, child, metricsPort, output });
    }
    gatewayUrl = `http://127.0.0.1:${gateway}`;
    await until(
      async () => {
        const exited = children.find((c) => c.child.exitCode !== null);
        if (exited) throw new Error(`${exited.name} exited (${exited.child.exitCode}): ${exited.output.join('').slice(-3000)}`);
        return fetch(`${gatewayUrl}/readyz`).then(
          async (response) => (await response.arrayBuffer(), response.status === 200),
          () => false,
        );
      },
      'the gateway to be ready',
      60_000,
      100,
    );
    receiver = await new WebhookReceiver(() => appSecret).start();
    pages = await PageServer.start();
  }, 120_000);

  afterAll(async () => {
    await Promise.all(
      children.map(({ child }) =>
        child.exitCode !== null || child.signalCode !== null
          ? undefined
          : new Promise<void>((resolve) => {
              const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
              child.once('exit', () => {
                clearTimeout(kill);
                resolve();
              });
              child.kill('SIGTERM');
            }),
      ),
    );
    await receiver?.stop();
    await pages?.close();
    await dropDatabase(serverUrl, databaseName);
    await deleteRedisPrefix(redisUrl, redisPrefix);
  }, 60_000);

  it('exports every metric and label the dashboard queries, once requests, messages, previews and webhooks went through', async () => {
    const created = await request(gatewayUrl, 'POST', '/v1/applications', { token: await customerToken(customer.id, customer.secret), body: { name: 'dashboard' } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    appSecret = created.body.secret;
    const token = await serverToken(created.body.applicationID, appSecret);
    const call = (method: string, path: string, body?: unknown) => request(gatewayUrl, method, path, { token, body });
    expect((await call('PUT', '/v1/users/alice', { name: 'Alice' })).status).toBe(200);
    expect((await call('PUT', '/v1/groups/team', { name: 'Team', members: ['alice'] })).status).toBe(200);
    expect((await call('PUT', '/v1/users/alice/presence', { groupID: 'team', location: { page: 'dashboard' } })).status).toBe(200);
    const missing = await call('GET', '/v1/users/nobody');
    // An unknown user answers 401 user_not_found, as the original does: an error status to count.
    expect(missing.status, JSON.stringify(missing.body)).toBe(401);
    const hook = await call('POST', `/v1/applications/${created.body.applicationID}/webhooks`, { url: `${receiver.url}/hook`, events: ['thread-message-added'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const page = pages.page('/article', html('<meta property="og:title" content="An article">'));
    const message = await call('POST', '/v1/threads/dashboard-thread/messages', {
      authorID: 'alice',
      content: [{ type: 'p', children: [{ text: `read ${page}` }] }],
      createThread: { groupID: 'team', name: 'Dashboard', location: { page: 'dashboard' }, url: 'https://example.com/dashboard' },
    });
    expect(message.status, JSON.stringify(message.body)).toBe(200);
    expect((await call('GET', '/v1/threads/dashboard-thread/messages')).status).toBe(200);
    await receiver.waitFor((r) => r.path === '/hook' && (r.body as Doc | null)?.type === 'thread-message-added');
    await until(async () => pages.hits('/article') > 0, 'the link preview to be fetched', 20_000);

    const scrapeAll = () =>
      Promise.all(
        children.map(async ({ name, metricsPort }) => {
          const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
          expect(response.status, name).toBe(200);
          return response.text();
        }),
      );
    // Counters are incremented once the attempt or fetch has ended, just after the receiver saw it.
    let scrapes: string[] = [];
    await until(
      async () => {
        scrapes = await scrapeAll();
        const exported = exportedMetrics(scrapes);
        return exported.has('webhook_deliveries_total') && exported.has('link_preview_fetches_total');
      },
      'the delivery and the page fetch to be counted',
      20_000,
      200,
    );
    expect(scrapes).toHaveLength(11);
    const exported = exportedMetrics(scrapes);
    const problems = dashboardQueries(dashboard).flatMap(({ where, expr }) => queryProblems(expr, exported).map((p) => `${where}: ${p}`));
    expect(problems).toEqual([]);
  });
});
