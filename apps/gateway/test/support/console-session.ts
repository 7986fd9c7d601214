import type { Browser, BrowserContext, Locator, Page } from '@playwright/test';
import { expect } from 'vitest';
import { ResponseChecker, loadAdminOpenApi } from './admin-openapi';
import { answerChecker, type CheckedAnswer } from './console-answers';
import { consoleContext, launchChromium, screenshot, seriousViolations } from './console-browser';

/**
 * The admin API routes a login and the overview use: the session (and whether
 * single sign-on is offered), the agents, the webhooks, the live figures (an
 * event stream, checked in console-playground.e2e).
 */
export const LOGIN_ROUTES = [
  'POST /admin/v1/session',
  'GET /admin/v1/session',
  'GET /admin/v1/session/options',
  'GET /admin/v1/agents',
  'GET /admin/v1/webhooks',
  'GET /admin/v1/events',
];

/**
 * The console in headless Chromium, for the browser tests: one page on the
 * admin port's origin, every answer of the admin API to it recorded and
 * checked against docs/admin-openapi.yaml (`expectDocumentedAnswers` at the
 * end of a file), and the checks every page gets (axe, a screenshot).
 */
export class ConsoleSession {
  /** The admin API's answers to the page, each checked against the document. */
  readonly answers: Promise<CheckedAnswer>[] = [];

  private constructor(
    readonly browser: Browser,
    readonly context: BrowserContext,
    readonly page: Page,
  ) {}

  static async open(origin: string): Promise<ConsoleSession> {
    const browser = await launchChromium();
    const context = await consoleContext(browser, origin);
    const session = new ConsoleSession(browser, context, await context.newPage());
    const documented = answerChecker(loadAdminOpenApi(), new ResponseChecker(loadAdminOpenApi()));
    session.page.on('response', (response) => {
      const { pathname } = new URL(response.url());
      if (pathname.startsWith('/admin/v1'))
        session.answers.push(documented(response.request().method(), pathname, response));
    });
    return session;
  }

  /** The page's level-1 heading of that name. */
  heading(name: string | RegExp): Locator {
    return this.page.getByRole('heading', { level: 1, name });
  }

  /** Logged in with an admin token, on the overview. */
  async logIn(token: string): Promise<void> {
    await this.page.goto('/console/');
    await this.page.getByLabel('Admin token').fill(token);
    await this.page.getByRole('button', { name: 'Log in' }).click();
    await this.heading('Overview').waitFor();
  }

  /** Once nothing is loading: no serious accessibility violation, and a screenshot when named (`mask` covered). */
  async audit(shot?: string, mask: Locator[] = []): Promise<void> {
    await expect.poll(() => this.page.getByText('Loading…').count()).toBe(0);
    expect(await seriousViolations(this.page)).toEqual([]);
    if (shot) await screenshot(this.page, shot, mask);
  }

  /**
   * Every answer the page got was valid by its schema, and the page used
   * exactly `routes` of the document; with `mostRead`, most bodies were read
   * (a few may be gone with the page that asked). The answers, for more checks.
   */
  async expectDocumentedAnswers(routes: string[], options: { mostRead?: boolean } = {}): Promise<CheckedAnswer[]> {
    const checked = await Promise.all(this.answers);
    if (options.mostRead) expect(checked.filter((answer) => answer.read).length).toBeGreaterThan(checked.length * 0.8);
    expect(checked.filter((answer) => answer.problems.length > 0)).toEqual([]);
    expect(new Set(checked.map((answer) => answer.route))).toEqual(new Set(routes));
    return checked;
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}
