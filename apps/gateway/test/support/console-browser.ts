import AxeBuilder from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from '@playwright/test';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Debian's chromium (.ci/run installs it): Playwright's own browser download is not reachable here. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Where the test run leaves a screenshot of every page: docs/console (committed,
 * shown in docs/admin.md) with UPDATE_SCREENSHOTS=1, else a temporary folder, so
 * that `npm test` leaves the working tree as it found it.
 */
export const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS
  ? resolve(dirname(fileURLToPath(import.meta.url)), '../../../../docs/console')
  : mkdtempSync(join(tmpdir(), 'mcpgw-console-shots-'));

/**
 * Headless Chromium as a test browser: no sandbox (root in CI), and none of the
 * traffic a browser makes on its own (updates, sync, safe browsing, metrics),
 * so a test run reaches nothing but the stack under test.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--disable-client-side-phishing-detection',
      '--metrics-recording-only',
      '--no-first-run',
      '--disable-features=Translate,OptimizationHints,MediaRouter,CertificateTransparencyComponentUpdater',
    ],
  });
}

/** A fresh context (no cookies), allowed to use the clipboard on `origin`. */
export async function consoleContext(browser: Browser, origin: string): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: origin });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  return context;
}

/** The serious and critical accessibility violations of the page as it is now (axe-core, WCAG 2.x A and AA). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.nodes.map((n) => n.target).join(' ')}`);
}

/** A full-page screenshot as docs/console/<name>.png, with `mask` covered (secrets). */
export async function screenshot(page: Page, name: string, mask: Locator[] = []): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true, mask });
}
