/**
 * The console as a person uses it, in Chromium against a running system: sign in, create an
 * application and copy its secret, change its settings, rotate its secret, delete it; and the
 * operator's page. Every page passes axe-core's check (no serious or critical violation).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemForFile, type TestSystem } from '../support/system.js';
import { expectAccessible, launchBrowser, newContext, screenshot } from './browser.js';

const OPERATOR = { ADMIN_USERNAME: 'ops', ADMIN_PASSWORD: 'a-long-operator-password' };

let system: TestSystem;
let browser: Browser;
let context: BrowserContext;
let page: Page;

systemForFile((started) => (system = started), { env: OPERATOR });

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

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await page.request.get('/console/api/session')).status()).toBe(401);
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
    await expectAccessible(page, 'operator');
    await screenshot(page, 'operator');
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
