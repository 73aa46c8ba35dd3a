/**
 * One Chromium per test file (Debian's /usr/bin/chromium, driven by playwright-core), axe-core's
 * accessibility check, and screenshots of the console's pages for docs/console/.
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SCREENSHOTS = path.resolve(import.meta.dirname, '../../docs/console');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
}

/** A context whose pages may use the clipboard, and where axe's script may be injected. */
export async function newContext(browser: Browser, baseURL: string): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL, viewport: DESKTOP, bypassCSP: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  return context;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Fails on a serious or critical accessibility violation of the page as it is now. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  // Evaluated in the page (as text: the tests compile without the DOM's types).
  if (!(await page.evaluate("'axe' in window"))) await page.addScriptTag({ path: AXE });
  const violations = (await page.evaluate('axe.run().then((result) => result.violations)')) as AxeViolation[];
  const serious = violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`);
  expect(serious, name).toEqual([]);
}

/**
 * Screenshots of the page at a desktop's and a phone's size into docs/console/ when
 * CONSOLE_SCREENSHOTS is set (`CONSOLE_SCREENSHOTS=1 npx vitest run test/console`).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!process.env.CONSOLE_SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
}
