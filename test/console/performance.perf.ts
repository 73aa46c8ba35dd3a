/**
 * The console with real volumes, measured rather than asserted: an application with 10,000 users
 * (in one group), 10,000 more groups, 100,000 messages (one thread of 50,000 and 50 of 1,000) and 10,000 webhook
 * deliveries, seeded straight into the services' tables; then each page is loaded afresh in
 * Chromium and its time to content (navigation to the page's data on screen) recorded, the median
 * of RUNS loads. Writes docs/console/PERFORMANCE.md. Run it alone:
 *   npm run build && npx vitest run -c vitest.console-performance.config.ts
 */
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, expect, it } from 'vitest';
import { createApplication, type TestApplication } from '../support/client.js';
import { putEach, seedThread } from '../support/seed.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { launchBrowser, newContext } from './browser.js';

const USERS = 10_000;
/** Groups beside `everyone`, so that the Groups page pages too. */
const GROUPS = 10_000;
const BIG_THREAD = 50_000;
const THREADS = 50;
const THREAD_MESSAGES = 1_000;
const DELIVERIES = 10_000;
const RUNS = 5;
const OPERATOR = { ADMIN_USERNAME: 'ops', ADMIN_PASSWORD: 'a-long-operator-password' };
const REPORT = path.resolve(import.meta.dirname, '../../docs/console/PERFORMANCE.md');

let system: TestSystem;
let browser: Browser | undefined;
systemForFile((started) => (system = started), { env: OPERATOR });
afterAll(() => browser?.close());

/** Users u00001…u10000 with a name, an e-mail and metadata, all members of group `everyone`. */
async function seedUsers(app: TestApplication): Promise<void> {
  await putEach(app, '/v1/users', [['ann', { name: 'Ann' }]]);
  await putEach(app, '/v1/groups', [['everyone', { name: 'Everyone', members: ['ann'] }]]);
  await system.sql.query(
    `INSERT INTO identity.users (application_id, external_id, name, email, metadata)
     SELECT $1, 'u' || lpad(i::text, 5, '0'), 'User ' || i, 'user' || i || '@example.com', jsonb_build_object('team', 'team-' || (i % 20))
     FROM generate_series(1, $2::int) AS i`,
    [app.id, USERS - 1],
  );
  await system.sql.query(
    `INSERT INTO identity.group_members (group_id, user_id, application_id)
     SELECT g.internal_id, u.internal_id, $1 FROM identity.groups g, identity.users u
     WHERE g.application_id = $1 AND g.external_id = 'everyone' AND u.application_id = $1 AND u.external_id LIKE 'u%'`,
    [app.id],
  );
}

/** Groups g00001…g10000 without members, created after `everyone`. */
async function seedGroups(app: TestApplication): Promise<void> {
  await system.sql.query(
    `INSERT INTO identity.groups (application_id, external_id, name)
     SELECT $1, 'g' || lpad(i::text, 5, '0'), 'Group ' || i FROM generate_series(1, $2::int) AS i`,
    [app.id, GROUPS],
  );
}

/** Failed deliveries of recorded events, each with one attempt, as the worker leaves them. */
async function seedDeliveries(app: TestApplication): Promise<void> {
  await system.sql.query(
    `WITH events AS (
       INSERT INTO webhooks.events (id, application_id, type, payload, created_at)
       SELECT gen_random_uuid(), $1, 'thread-message-added', '{}', now() - make_interval(secs => i) FROM generate_series(1, $2::int) AS i
       RETURNING id, created_at),
     deliveries AS (
       INSERT INTO webhooks.deliveries (id, event_id, application_id, url, status, attempts, last_status_code, last_error, created_at, last_attempt_at)
       SELECT gen_random_uuid(), id, $1, 'https://example.com/hook', 'failed', 1, 410, 'HTTP 410: gone', created_at, created_at FROM events
       RETURNING id, created_at)
     INSERT INTO webhooks.delivery_attempts (delivery_id, attempt, application_id, started_at, duration_ms, status, status_code, error)
     SELECT id, 1, $1, created_at, 12, 'failed', 410, 'HTTP 410: gone' FROM deliveries`,
    [app.id, DELIVERIES],
  );
}

interface Figure {
  page: string;
  url: string;
  medianMs: number;
  maxMs: number;
}

/** Loads `url` afresh RUNS times and measures until `content` is visible. */
async function timeToContent(page: Page, name: string, url: string, content: (page: Page) => Locator): Promise<Figure> {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    await page.goto('about:blank');
    const started = performance.now();
    await page.goto(url);
    await content(page).first().waitFor({ timeout: 60_000 });
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { page: name, url, medianMs: Math.round(times[Math.floor(RUNS / 2)]!), maxMs: Math.round(times[RUNS - 1]!) };
}

it('measures every console page with 10,000 users and 100,000 messages', async () => {
  const seedStarted = performance.now();
  const app = await createApplication(system, 'Volume');
  await seedUsers(app);
  await seedGroups(app);
  await seedThread(app, 'big', 'big-thread', BIG_THREAD);
  for (let i = 1; i <= THREADS; i++) await seedThread(app, `group-${i}`, `thread-${i}`, THREAD_MESSAGES);
  await seedDeliveries(app);
  const seedSeconds = (performance.now() - seedStarted) / 1000;
  const counts = (
    await system.sql.query(
      `SELECT (SELECT count(*) FROM identity.users WHERE application_id = $1)::int AS users,
              (SELECT count(*) FROM conversation.messages WHERE application_id = $1)::int AS messages,
              (SELECT count(*) FROM webhooks.deliveries WHERE application_id = $1)::int AS deliveries,
              (SELECT count(*) FROM identity.groups WHERE application_id = $1)::int AS groups`,
      [app.id],
    )
  ).rows[0] as { users: number; messages: number; deliveries: number; groups: number };
  // The groups: `everyone`, the seeded ones, and one per seeded thread.
  expect(counts).toEqual({ users: USERS, messages: BIG_THREAD + THREADS * THREAD_MESSAGES, deliveries: DELIVERIES, groups: 1 + GROUPS + 1 + THREADS });
  const delivery = (await app.client.get('/v1/webhooks/deliveries?limit=1')).body.deliveries[0].id as string;

  browser = await launchBrowser();
  const context = await newContext(browser, system.url);
  const page = await context.newPage();
  await page.goto('/console/');
  await page.getByLabel('Customer ID').fill(system.customer.id);
  await page.getByLabel('Customer secret').fill(system.customer.secret);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Applications' }).waitFor();

  const apps = `/console/#/apps/${app.id}`;
  const figures: Figure[] = [];
  const measure = async (name: string, url: string, content: (page: Page) => Locator) => figures.push(await timeToContent(page, name, url, content));
  await measure('Applications', '/console/#/', (p) => p.getByRole('link', { name: 'Volume' }));
  await measure('Settings', `${apps}/settings`, (p) => p.getByRole('button', { name: 'Save settings' }));
  await measure('Users (page of 50 of 10,000)', `${apps}/users`, (p) => p.getByText(`${USERS} users`));
  await measure('User', `${apps}/users/u05000`, (p) => p.getByRole('link', { name: 'everyone' }));
  await measure(`Groups (page of 50 of ${counts.groups.toLocaleString('en')})`, `${apps}/groups`, (p) => p.getByText(`${counts.groups} groups`));
  await measure('Group members (page of 50 of 10,000)', `${apps}/groups/everyone`, (p) => p.getByRole('link', { name: 'u00001' }));
  await measure('Threads (page of 50 of 51)', `${apps}/threads`, (p) => p.getByText(`${THREADS + 1} threads`));
  await measure('Thread of 50,000 messages', `${apps}/threads/big-thread`, (p) => p.getByRole('article').first());
  await measure('Thread of 1,000 messages', `${apps}/threads/thread-1`, (p) => p.getByRole('article').first());
  await measure('Webhooks (page of 50 of 10,000 deliveries)', `${apps}/webhooks`, (p) => p.getByRole('row', { name: /failed 1 410/ }));
  await measure('Delivery with its attempts', `${apps}/webhooks/${delivery}`, (p) => p.getByRole('row', { name: /^1 failed 410/ }));
  await measure('Token', `${apps}/token`, (p) => p.getByRole('button', { name: 'Mint a server token' }));
  await measure('Import and export', '/console/#/data', (p) => p.getByRole('button', { name: 'Import' }));
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in as the operator' }).click();
  await page.getByLabel('User name').fill(OPERATOR.ADMIN_USERNAME);
  await page.getByLabel('Password').fill(OPERATOR.ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Deployment' }).waitFor();
  await measure('Operator', '/console/#/', (p) => p.getByRole('row', { name: /^webhooks-delivery / }));

  const slow = figures.filter((figure) => figure.medianMs > 1000).map((figure) => figure.page);
  const rows = figures.map((figure) => `| ${figure.page} | \`${figure.url.replace(app.id, '<app>').replace(delivery, '<delivery>')}\` | ${figure.medianMs} | ${figure.maxMs} |`);
  writeFileSync(
    REPORT,
    `# Console performance

Time to content of each console page, in Chromium, with one application holding ${USERS.toLocaleString('en')} users
(all in one group), ${counts.groups.toLocaleString('en')} groups, ${counts.messages.toLocaleString('en')} messages (one thread of ${BIG_THREAD.toLocaleString('en')} and
${THREADS} threads of ${THREAD_MESSAGES.toLocaleString('en')}) and ${DELIVERIES.toLocaleString('en')} webhook deliveries. Time to
content runs from navigating to the page until its data is on screen (the bundle loaded, the session read, the
API answered, the page rendered); each figure is the median (and the slowest) of ${RUNS} fresh loads. Every list
is one page of 50 (a thread: its first 50 messages), never everything.

Measured, not asserted: re-run it with

\`\`\`sh
npm run build && npx vitest run -c vitest.console-performance.config.ts
\`\`\`

It starts its own system (database, Redis prefix, ports), seeds the data straight into the services' tables
(${seedSeconds.toFixed(0)} s here) and rewrites this file.

Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, 1-minute load ${loadavg()[0]!.toFixed(1)} at the end
(other work ran on it meanwhile). ${new Date().toISOString().slice(0, 10)}.

| Page | Address | Median ms | Slowest ms |
|---|---|---:|---:|
${rows.join('\n')}

Over a second (median): ${slow.length ? slow.join(', ') : 'none'}.
`,
  );
  console.log(rows.join('\n'));
});
