// Debian's Chromium driven by playwright-core, for the pages' browser tests: launched once per
// file, a fresh context per test, and axe-core's verdict on a page.
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

/** CI installs the Debian package (see .ci/run); without it a browser test fails rather than skips. */
export const chromiumPath = '/usr/bin/chromium';
export const screenshots = 'test-artifacts/screenshots';
export const desktop = { width: 1280, height: 800 };
export const phone = { width: 390, height: 844 };
const axePath = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`Chromium is missing at ${chromiumPath}: install the Debian package "chromium" (apt-get install -y chromium), as .ci/run does.`);
  mkdirSync(screenshots, { recursive: true });
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
}

/** A page in a fresh context (no cookies) at the given size; axe-core may be added despite the page's own CSP. */
export async function openPage(browser: Browser, viewport = desktop): Promise<Page> {
  const context = await browser.newContext({ viewport, bypassCSP: true, ...(viewport === phone ? { isMobile: true, hasTouch: true } : {}) });
  // Well inside a test's 30 seconds, so a stuck page fails with what it shows.
  context.setDefaultTimeout(10_000);
  return context.newPage();
}

/** axe-core's serious and critical violations on the page, as `id: help`. */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: axePath });
  const results = await page.evaluate(() => (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string | null; help: string }[] }> } }).axe.run());
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}
