/**
 * The console as a person uses it, in Chromium against a running system: sign in, create an
 * application and copy its secret, change its settings, rotate its secret, delete it; and the
 * operator's page. Every page passes axe-core's check (no serious or critical violation).
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createRedis } from '@collab/shared';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previewsDrained } from '../previews/drained.js';
import { html, PageServer } from '../previews/page-server.js';
import { createApplication, type TestApplication } from '../support/client.js';
import { FIXTURE_DUMP } from '../support/imports.js';
import { putEach, seedTeam, seedThread } from '../support/seed.js';
import { systemForFile, type TestSystem } from '../support/system.js';
import { serverToken } from '../support/tokens.js';
import { expectAccessible, launchBrowser, newContext, screenshot } from './browser.js';

const OPERATOR = { ADMIN_USERNAME: 'ops', ADMIN_PASSWORD: 'a-long-operator-password' };

let system: TestSystem;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let pages: PageServer;

systemForFile((started) => (system = started), {
  env: { ...OPERATOR, LINK_PREVIEWS: 'on', OUTBOUND_ALLOWED_CIDRS: '127.0.0.1/32' },
  beforeStop: () => pages?.close(),
});

beforeAll(async () => {
  browser = await launchBrowser();
  context = await newContext(browser, system.url);
  page = await context.newPage();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

async function signInAsCustomer() {
  await page.goto('/console/');
  await page.getByLabel('Customer ID').fill(system.customer.id);
  await page.getByLabel('Customer secret').fill(system.customer.secret);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Applications' }).waitFor();
}

describe('a customer', () => {
  let applicationId = '';

  it('signs in, after a wrong secret is refused', async () => {
    await page.goto('/console/');
    await expectAccessible(page, 'sign-in');
    await screenshot(page, 'sign-in');
    await page.getByLabel('Customer ID').fill(system.customer.id);
    await page.getByLabel('Customer secret').fill('wrong');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('The customer ID or secret is wrong.');
    await signInAsCustomer();
    const cookies = await context.cookies();
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite])).toEqual([['console_session', true, 'Strict']]);
    // The page's script cannot read the session.
    expect(await page.evaluate('document.cookie')).toBe('');
  });

  it('creates an application, sees its secret once and copies it', async () => {
    await page.getByLabel('New application name').fill('Support chat');
    await page.getByRole('button', { name: 'Create' }).click();
    const secret = (await page.getByTestId('secret').textContent())!;
    expect(secret.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    const row = page.getByRole('row', { name: /Support chat/ });
    await row.waitFor();
    await expectAccessible(page, 'applications');
    await screenshot(page, 'applications');
    await row.getByRole('link', { name: 'Support chat' }).click();
    await page.getByRole('heading', { name: 'Support chat' }).waitFor();
    applicationId = page.url().split('/apps/')[1]!.split('/')[0]!;
    expect(applicationId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('renames it and sets its redirect URI and e-mail sender', async () => {
    await expectAccessible(page, 'settings');
    await page.getByLabel('Name', { exact: true }).fill('Support chat EU');
    await page.getByLabel('Redirect URI').fill('https://example.com/back');
    await page.getByLabel('E-mail sender address').fill('chat@example.com');
    await page.getByRole('checkbox', { name: 'notification-created' }).uncheck();
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('heading', { name: 'Support chat EU' }).waitFor();
    await screenshot(page, 'settings');
    const stored = await system.sql.query('SELECT name, redirect_uri FROM identity.applications WHERE id = $1', [applicationId]);
    expect(stored.rows).toEqual([{ name: 'Support chat EU', redirect_uri: 'https://example.com/back' }]);
  });

  it('sees why a webhook URL is refused', async () => {
    await page.getByLabel('Event webhook URL').fill('http://127.0.0.1:9/nothing-listens');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/webhook|URL/i);
    await page.getByLabel('Event webhook URL').fill('');
  });

  it('rotates its secret and sees until when the previous one works', async () => {
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText(/The previous secret keeps working for server tokens until/).waitFor();
    expect((await page.getByTestId('secret').textContent())!.length).toBeGreaterThan(20);
    await expectAccessible(page, 'rotated');
  });

  it('deletes it by typing its name', async () => {
    await page.getByLabel(/to delete this application/).fill('Support chat');
    await page.getByRole('button', { name: 'Delete application' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/type the application's name/);
    await page.getByLabel(/to delete this application/).fill('Support chat EU');
    await page.getByRole('button', { name: 'Delete application' }).click();
    await page.getByRole('heading', { name: 'Applications' }).waitFor();
    await page.getByText('No applications yet.').waitFor();
  });

  it('is sent back to sign-in when the session has ended', async () => {
    const redis = createRedis(system.env.REDIS_URL!);
    try {
      const sessions = await redis.keys(`${system.env.REDIS_PREFIX}:console:session:*`);
      await redis.del(...sessions);
    } finally {
      redis.disconnect();
    }
    // The next call the page makes is refused, and the page starts over at sign-in.
    await page.getByLabel('New application name').fill('Too late');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await signInAsCustomer();
    await page.getByText('No applications yet.').waitFor();
  });

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await page.request.get('/console/api/session')).status()).toBe(401);
  });
});

/** An application whose thread has every content node type, reactions, a file and a link preview. */
async function seedData(): Promise<TestApplication> {
  const app = await createApplication(system, 'Data app');
  await seedTeam(app);
  pages = await PageServer.start();
  const link = pages.page('/guide', html('<title>Guide</title><meta property="og:title" content="The setup guide"><meta property="og:description" content="How to set it up">'));
  const form = new FormData();
  form.set('ownerID', 'ann');
  form.set('file', new Blob([Buffer.from('the report')], { type: 'text/plain' }), 'report.txt');
  const uploaded = await fetch(`${system.url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await serverToken(app.id, app.secret)}` },
    body: form,
  });
  const { fileID } = (await uploaded.json()) as { fileID: string };
  const text = (value: string) => ({ text: value });
  const created = await app.client.post('/v1/threads/launch/messages', {
    id: 'm1',
    authorID: 'ann',
    content: [
      { type: 'p', children: [text('Plain, '), { text: 'bold', bold: true }, text(', '), { text: 'italic', italic: true }, text(' and '), { text: 'code', code: true }] },
      { type: 'p', children: [text('Hello '), { type: 'mention', user: { id: 'bob' }, children: [text('@Bob')] }, text(', read '), { type: 'link', url: link, children: [text('the guide')] }] },
      { type: 'bullet', children: [{ type: 'p', children: [text('a bullet')] }] },
      { type: 'number_bullet', bulletNumber: 1, children: [{ type: 'p', children: [text('a numbered item')] }] },
      { type: 'quote', children: [text('a quote')] },
      { type: 'code', children: [text('npm start')] },
      { type: 'todo', todoID: 't1', done: true, children: [text('a done to-do')] },
      { type: 'assignee', user: { id: 'bob' }, children: [text('+Bob')] },
      { type: 'markdown', children: [text('**markdown**')] },
    ],
    addReactions: [
      { reaction: '👍', userID: 'bob' },
      { reaction: '👍', userID: 'ann' },
    ],
    addAttachments: [{ type: 'file', id: fileID }],
    createThread: { groupID: 'team', location: { page: 'launch' }, url: 'https://example.com/launch', name: 'Launch plan' },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  for (const [id, body] of [
    ['m2', { authorID: 'bob', type: 'action_message', content: [{ type: 'p', children: [text('Bob resolved the thread')] }] }],
    ['m3', { authorID: 'bob', content: [{ type: 'p', children: [text('first draft')] }] }],
    ['m4', { authorID: 'ann', content: [{ type: 'p', children: [text('to be removed')] }] }],
  ] as const)
    expect((await app.client.post('/v1/threads/launch/messages', { id, ...body })).status).toBe(200);
  expect((await app.client.put('/v1/threads/launch/messages/m3', { content: [{ type: 'p', children: [text('second draft')] }] })).status).toBe(200);
  expect((await app.client.put('/v1/threads/launch/messages/m4', { deleted: true })).status).toBe(200);
  await previewsDrained(system);
  return app;
}

/** A webhook receiver on 127.0.0.1 answering events with `status` (verification handshakes with 200). */
async function startReceiver() {
  const receiver = { status: 410, url: '', server: http.createServer() };
  receiver.server.on('request', (req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (body.includes('url-verification')) res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      else res.writeHead(receiver.status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/events`;
  return receiver;
}

describe('inside an application', () => {
  let app: TestApplication;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    app = await seedData();
    receiver = await startReceiver();
    await signInAsCustomer();
  }, 60_000);
  afterAll(() => receiver?.server.close());

  it('shows a thread as its users saw it: every node type, reactions, the file, the link preview, edits and deletions', async () => {
    await page.goto(`/console/#/apps/${app.id}/threads`);
    await page.getByRole('link', { name: 'Launch plan' }).click();
    const first = page.getByRole('article', { name: 'Message m1' });
    await first.waitFor();
    for (const shown of ['bold', 'italic', 'a bullet', 'a numbered item', 'a quote', 'npm start', 'a done to-do', '**markdown**'])
      await first.getByText(shown, { exact: true }).waitFor();
    expect(await first.locator('mark').allTextContents()).toEqual(['@Bob', '+Bob']);
    expect(await first.getByRole('link', { name: 'the guide' }).getAttribute('href')).toBe(pages.url('/guide'));
    expect(await first.getByLabel('Reactions').textContent()).toBe('👍 2');
    const file = first.getByRole('link', { name: 'report.txt' });
    const [download] = await Promise.all([page.waitForEvent('download'), file.click()]);
    expect(download.suggestedFilename()).toBe('report.txt');
    await first.getByLabel('Link preview').getByText('The setup guide').waitFor();
    await page.getByRole('article', { name: 'Message m2' }).getByText(/· action/).waitFor();
    await page.getByRole('article', { name: 'Message m3' }).getByText(/· edited/).waitFor();
    await page.getByRole('article', { name: 'Message m3' }).getByText('second draft').waitFor();
    await page.getByRole('article', { name: 'Message m4' }).getByText('This message was deleted.').waitFor();
    expect(await page.getByText('to be removed').count()).toBe(0);
    await expectAccessible(page, 'thread');
    await screenshot(page, 'thread');
  });

  it('shows a long thread 50 messages at a time', async () => {
    await seedThread(app, 'long', 'long-thread', 60);
    await page.goto(`/console/#/apps/${app.id}/threads/long-thread`);
    await page.getByRole('heading', { name: 'long-thread' }).waitFor();
    await expect.poll(() => page.getByRole('article').count()).toBe(50);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect.poll(() => page.getByRole('article').count()).toBe(10);
    await page.getByRole('button', { name: 'First page' }).click();
    await expect.poll(() => page.getByRole('article').count()).toBe(50);
  });

  it('lists groups 50 at a time and opens one with its members', async () => {
    const before = (await app.client.get('/v1/groups')).body.length as number;
    const more = Array.from({ length: 50 }, (_, index) => [`more-${String(index).padStart(2, '0')}`, { name: `More ${index}` }] as const);
    await putEach(app, '/v1/groups', more);
    await page.goto(`/console/#/apps/${app.id}/groups`);
    await page.getByText(`${before + 50} groups`).waitFor();
    await expect.poll(() => page.getByRole('row').count()).toBe(1 + 50);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('link', { name: 'more-49' }).waitFor();
    expect(await page.getByRole('row').count()).toBe(1 + before);
    await page.getByRole('button', { name: 'First page' }).click();
    await page.getByRole('link', { name: 'team' }).click();
    await page.getByRole('heading', { name: 'Members of team' }).waitFor();
    await page.getByRole('link', { name: 'ann' }).waitFor();
    await expectAccessible(page, 'groups');
  });

  it('finds users by ID, name or e-mail', async () => {
    await page.goto(`/console/#/apps/${app.id}/users`);
    await page.getByText('4 users').waitFor();
    const find = page.getByRole('form', { name: 'Find users' });
    await find.getByLabel('ID, name or e-mail').fill('CAR');
    await find.getByRole('button', { name: 'Search' }).click();
    await page.getByText('1 users').waitFor();
    expect(await page.getByRole('row').allTextContents()).toEqual([expect.stringMatching(/^ID/), expect.stringMatching(/^carlCarl/)]);
    await find.getByLabel('ID, name or e-mail').fill('nobody');
    await find.getByRole('button', { name: 'Search' }).click();
    await page.getByText('No users.').waitFor();
    await find.getByLabel('ID, name or e-mail').fill('');
    await find.getByRole('button', { name: 'Search' }).click();
    await page.getByText('4 users').waitFor();
  });

  it('lists users in pages and opens one with their groups, and marks them deleted', async () => {
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('link', { name: 'ann' }).click();
    await page.getByRole('heading', { name: 'Ann' }).waitFor();
    await page.getByRole('link', { name: 'team' }).waitFor();
    await page.getByRole('button', { name: 'Mark deleted' }).click();
    await page.getByRole('button', { name: 'Mark active' }).waitFor();
    expect((await app.client.get('/v1/users/ann')).body).toMatchObject({ status: 'deleted' });
    await page.getByRole('button', { name: 'Mark active' }).click();
    await page.getByRole('button', { name: 'Mark deleted' }).waitFor();
    await page.getByRole('link', { name: 'All users' }).click();
    await page.getByText('4 users').waitFor();
    await expectAccessible(page, 'users');
    await screenshot(page, 'users');
  });

  it("changes a user's notification preferences and shows where they are present", async () => {
    await page.goto(`/console/#/apps/${app.id}/users/ann`);
    const presence = page.getByRole('region', { name: 'Presence' });
    await presence.getByText('Not present anywhere.').waitFor();
    const preferences = page.getByRole('form', { name: 'Notification preferences' });
    expect(await preferences.getByRole('switch', { name: 'By e-mail' }).isChecked()).toBe(true);
    await preferences.getByRole('switch', { name: 'By Slack' }).uncheck();
    await preferences.getByRole('button', { name: 'Save preferences' }).click();
    await page.getByText('Preferences saved.').waitFor();
    expect((await app.client.get('/v1/users/ann/preferences')).body).toEqual({ notification_channels: { sendViaEmail: true, sendViaSlack: false } });

    for (const body of [
      { location: { page: 'launch' }, groupID: 'team', durable: true },
      { location: { page: 'docs', section: 'setup' }, groupID: 'team' },
    ])
      expect((await app.client.put('/v1/users/ann/presence', body)).status).toBe(200);
    await page.reload();
    await presence.getByRole('row', { name: /"page":"docs".*here now/ }).waitFor();
    await presence.getByRole('row', { name: /"page":"launch".*durable/ }).waitFor();
    expect(await page.getByRole('switch', { name: 'By Slack' }).isChecked()).toBe(false);
    await expectAccessible(page, 'user');
    await screenshot(page, 'user');
  });

  it('mints a short-lived server token to paste into curl', async () => {
    await page.getByRole('link', { name: 'Token' }).click();
    await page.getByRole('button', { name: 'Mint a server token' }).click();
    const curl = (await page.getByTestId('curl').textContent())!;
    const token = /Bearer ([^"]+)"/.exec(curl)![1]!;
    const users = await fetch(`${system.url}/v1/users`, { headers: { authorization: `Bearer ${token}` } });
    expect(users.status).toBe(200);
    await page.getByRole('button', { name: 'Copy command' }).click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(curl);
    await expectAccessible(page, 'token');
  });

  it('imports the fixture dump, following the progress bar to its summary, and exports a dump', async () => {
    await page.getByRole('link', { name: 'Import and export' }).click();
    await page.getByLabel(/Dump file/).setInputFiles(fileURLToPath(FIXTURE_DUMP));
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByRole('progressbar').first().waitFor();
    await page.getByText('Import completed').waitFor({ timeout: 60_000 });
    expect(await page.getByRole('progressbar').getAttribute('value')).toBe('1');
    const summary = page.getByRole('table', { name: 'Summary' });
    expect(await summary.getByRole('row', { name: /^applications 2 0$/ }).count()).toBe(1);
    expect(await summary.getByRole('row', { name: /^messages 46 0$/ }).count()).toBe(1);
    await expectAccessible(page, 'import');
    await screenshot(page, 'import');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the dump' }).click()]);
    const exported = await readFile((await download.path())!, 'utf8');
    expect(exported.trimEnd().endsWith('COMMIT;')).toBe(true);
    expect(exported).toContain('Data app');
  });

  it('registers a webhook, sees a delivery fail and why, fixes the receiver, replays it and sees the attempt succeed', async () => {
    await page.goto(`/console/#/apps/${app.id}/webhooks`);
    await page.getByLabel('Webhook URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Register webhook' }).click();
    await page.getByText(receiver.url, { exact: true }).waitFor();
    expect((await app.client.post('/v1/threads/launch/messages', { id: 'm5', authorID: 'ann', content: [{ type: 'p', children: [{ text: 'ping' }] }] })).status).toBe(200);
    // The delivery happens in the background: refresh until the log shows it failed.
    const failedRow = page.getByRole('row', { name: /thread-message-added .* failed 1 410/ });
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return failedRow.count();
      }, { timeout: 20_000 })
      .toBe(1);
    await expectAccessible(page, 'webhooks');
    await screenshot(page, 'webhooks');
    await failedRow.getByRole('link').click();
    expect(await page.getByTestId('delivery-status').textContent()).toBe('failed');
    receiver.status = 200;
    const attempts = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Attempt' }) });
    await attempts.getByRole('row', { name: /^1 failed 410 HTTP 410/ }).waitFor();
    await page.getByRole('button', { name: 'Replay' }).click();
    await page.getByRole('status').getByText('Replay queued.').waitFor();
    await expect
      .poll(async () => {
        await page.getByRole('button', { name: 'Refresh' }).click();
        return [await page.getByTestId('delivery-status').textContent(), await attempts.getByRole('row', { name: /^2 succeeded 200 / }).count()];
      }, { timeout: 20_000 })
      .toEqual(['succeeded', 1]);
    expect(await attempts.getByRole('row').count()).toBe(3);
    await expectAccessible(page, 'delivery');
    await screenshot(page, 'delivery');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  });
});

describe('the operator', () => {
  it('signs in and sees every service ready and every queue', async () => {
    await page.goto('/console/');
    await page.getByRole('button', { name: 'Sign in as the operator' }).click();
    await page.getByLabel('User name').fill(OPERATOR.ADMIN_USERNAME);
    await page.getByLabel('Password').fill(OPERATOR.ADMIN_PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Deployment' }).waitFor();
    for (const service of ['identity', 'conversation', 'notification', 'webhooks'])
      expect(await page.getByRole('row', { name: new RegExp(`^${service} yes`) }).count()).toBe(1);
    expect(await page.getByRole('row', { name: /^webhooks-delivery / }).count()).toBe(1);
    // The test system runs one in-process worker on each queue.
    expect(await page.getByRole('row', { name: /^webhooks-delivery 1 / }).count()).toBe(1);
    await page.getByRole('row', { name: new RegExp(`^${system.customer.id} \\d+ `) }).waitFor();
    await expectAccessible(page, 'operator');
    await screenshot(page, 'operator');
  });
});

describe('the queue dashboard', () => {
  it('loads everything, its fonts too, from the gateway, under its Content-Security-Policy', async () => {
    const dashboard = await browser.newContext({ baseURL: system.url, httpCredentials: { username: OPERATOR.ADMIN_USERNAME, password: OPERATOR.ADMIN_PASSWORD } });
    try {
      const tab = await dashboard.newPage();
      const requested: string[] = [];
      const refused: string[] = [];
      tab.on('request', (request) => requested.push(request.url()));
      tab.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
      });
      const answer = await tab.goto('/admin/queues');
      expect(answer?.headers()['content-security-policy']).toMatch(/^default-src 'self'/);
      await tab.getByText('webhooks-delivery').first().waitFor();
      await expect.poll(() => tab.evaluate("document.fonts.check('16px \"IBM Plex Sans\"')")).toBe(true);
      expect(requested.filter((url) => !url.startsWith(system.url))).toEqual([]);
      expect(requested.some((url) => url.includes('/admin/queues/fonts/ibm-plex-sans/'))).toBe(true);
      expect(refused).toEqual([]);
    } finally {
      await dashboard.close();
    }
  });
});

describe('what the console serves', () => {
  it("holds to Content-Security-Policy default-src 'self' and loads nothing from elsewhere", async () => {
    const response = await fetch(`${system.url}/console/`);
    expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'self'/);
    const html = await response.text();
    expect(html).not.toMatch(/https?:\/\//);
  });
});
