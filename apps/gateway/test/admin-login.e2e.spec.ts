import { freePort, startTestStack, type TestStack } from '@mcpgw/devstack';
import type { Browser } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseChecker, loadAdminOpenApi } from './support/admin-openapi';
import { consoleContext, launchChromium } from './support/console-browser';

const ADMIN_PORT = await freePort();
const ADMIN_URL = `http://127.0.0.1:${ADMIN_PORT}`;
const CONSOLE_URL = `${ADMIN_URL}/console/`;

interface LoginLink {
  id: string;
  code: string;
  url: string;
  expires_at: string;
}

/**
 * The console's other ways in (admin-api/README.md): the one-time login link
 * `npm start` prints (`console login-link`), used once, in a real browser too.
 */
describe('console login', () => {
  const checker = new ResponseChecker(loadAdminOpenApi());
  let env: TestStack;
  let browser: Browser;

  const exchange = async (body: unknown) => {
    const response = await fetch(`${ADMIN_URL}/admin/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    expect(checker.check('POST', '/admin/v1/session', response.status, answer)).toEqual([]);
    return { status: response.status, body: answer, cookies: response.headers.getSetCookie() };
  };
  const loginLink = (...flags: string[]) =>
    env.stack.admin<LoginLink>('console', 'login-link', '--url', CONSOLE_URL, ...flags);

  beforeAll(async () => {
    env = await startTestStack({ gatewayEnv: { ADMIN_PORT: String(ADMIN_PORT) } });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await env?.stop();
  });

  describe('the one-time login link', () => {
    it('carries its code in the fragment; the code logs in once, and a second use is refused', async () => {
      const link = await loginLink();
      expect(link.url).toBe(`${CONSOLE_URL}#login=${link.code}`);
      expect(link.code).toMatch(/^adl_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
      // Ten minutes unless told otherwise.
      expect(Date.parse(link.expires_at) - Date.now()).toBeGreaterThan(590_000);
      expect(Date.parse(link.expires_at) - Date.now()).toBeLessThan(610_000);

      // A wrong secret under its id is refused and does not use the code up.
      const wrong = await exchange({ login_code: `${link.code.slice(0, -1)}${link.code.endsWith('A') ? 'B' : 'A'}` });
      expect(wrong.status).toBe(401);
      const first = await exchange({ login_code: link.code });
      expect(first.status).toBe(201);
      const cookie = first.cookies.map((line) => line.split(';')[0]).join('; ');
      const me = await fetch(`${ADMIN_URL}/admin/v1/session`, { headers: { cookie } });
      const session = (await me.json()) as { token_id: string; via: string };
      expect(session.via).toBe('session');
      // Its session belongs to an admin token of its own, listed (and revocable) like any other.
      const tokens = await env.stack.admin<{ id: string; label: string }[]>('console', 'token', 'list');
      expect(tokens.find((t) => t.id === session.token_id)?.label).toBe(`login link ${link.id}`);

      const second = await exchange({ login_code: link.code });
      expect(second.status).toBe(401);
      expect(second.body).toMatchObject({ error: { code: 'unauthorized' } });
      expect(second.cookies).toEqual([]);
    });

    it('expires', async () => {
      const link = await loginLink('--ttl', '1');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await exchange({ login_code: link.code })).status).toBe(401);
    });

    it('two exchanges at once get one session between them', async () => {
      const link = await loginLink();
      const answers = await Promise.all([1, 2, 3].map(() => exchange({ login_code: link.code })));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 401, 401]);
    });

    it('refuses a token and a code together, and bad lifetimes, in the documented form', async () => {
      const link = await loginLink();
      const both = await exchange({ login_code: link.code, token: 'adm_x' });
      expect(both.status).toBe(400);
      expect(both.body).toMatchObject({ error: { code: 'invalid_request' } });
      for (const ttl of ['0', '3601']) {
        await expect(loginLink('--ttl', ttl)).rejects.toThrow(/--ttl must be 1 to 3600 seconds/);
      }
    });

    it('never reaches the logs', async () => {
      const link = await loginLink();
      expect((await exchange({ login_code: link.code })).status).toBe(201);
      const logs = JSON.stringify(env.stack.serving(env.gatewayUrls[0]).logs);
      expect(logs).not.toContain(link.code.slice(17));
      // The exchange itself was logged (the audit line), without the code.
      expect(logs).toContain('"path":"/admin/v1/session"');
    });

    it('in a browser: opens the console logged in, takes the code out of the address; used again, it is refused', async () => {
      const link = await loginLink();
      const context = await consoleContext(browser, ADMIN_URL);
      const page = await context.newPage();
      await page.goto(link.url);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      expect(page.url()).toBe(CONSOLE_URL);
      // Replaced, not pushed: going back leaves the console (the tab's first page was blank).
      await page.goBack();
      expect(page.url()).not.toContain('#login=');
      await context.close();

      const other = await consoleContext(browser, ADMIN_URL);
      const again = await other.newPage();
      await again.goto(link.url);
      await again
        .getByRole('alert')
        .getByText(/login link was refused/)
        .waitFor();
      expect(await again.getByLabel('Admin token').isVisible()).toBe(true);
      await other.close();
    });
  });
});
