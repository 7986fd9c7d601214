import {
  driveAuthorization,
  freePort,
  startAuthorizationServer,
  startTestStack,
  type AuthorizationServer,
  type TestStack,
} from '@mcpgw/devstack';
import type { Browser } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseChecker, loadAdminOpenApi } from './support/admin-openapi';
import { consoleContext, launchChromium, screenshot, seriousViolations } from './support/console-browser';

const ADMIN_PORT = await freePort();
const ADMIN_URL = `http://127.0.0.1:${ADMIN_PORT}`;
const CONSOLE_URL = `${ADMIN_URL}/console/`;
const REDIRECT_URL = `${ADMIN_URL}/admin/v1/session/oidc/callback`;

interface LoginLink {
  id: string;
  code: string;
  url: string;
  expires_at: string;
}

/**
 * The console's other ways in (admin-api/README.md): the one-time login link
 * `npm start` prints (`console login-link`), used once, in a real browser too;
 * OIDC through a real authorization server (oidc-provider), its login driven
 * over HTTP with redirects followed: an allowed subject gets a session, another
 * is refused, a state that is not the browser's is refused.
 */
describe('console login', () => {
  const checker = new ResponseChecker(loadAdminOpenApi());
  let env: TestStack;
  let browser: Browser;
  let provider: AuthorizationServer;

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
    provider = await startAuthorizationServer({ users: ['alice', 'bob'] });
    const metadata = (await (await fetch(`${provider.issuer}/.well-known/openid-configuration`)).json()) as {
      registration_endpoint: string;
    };
    const registered = (await (
      await fetch(metadata.registration_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: [REDIRECT_URL],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        }),
      })
    ).json()) as { client_id: string; client_secret: string };
    env = await startTestStack({
      gatewayEnv: {
        ADMIN_PORT: String(ADMIN_PORT),
        ADMIN_OIDC_ISSUER: provider.issuer,
        ADMIN_OIDC_CLIENT_ID: registered.client_id,
        ADMIN_OIDC_CLIENT_SECRET: registered.client_secret,
        ADMIN_OIDC_REDIRECT_URL: REDIRECT_URL,
        ADMIN_OIDC_ALLOWED_SUBJECTS: 'alice',
      },
    });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await env?.stop();
    await provider?.stop();
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

  it('the Keys and grants page (after a login link): a token and a grant shown once, the token revoked', async () => {
    const link = await loginLink();
    const context = await consoleContext(browser, ADMIN_URL);
    const page = await context.newPage();
    await page.goto(link.url);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.getByRole('link', { name: 'Keys and grants' }).click();
    await page.getByRole('heading', { level: 1, name: 'Keys and grants' }).waitFor();
    await page.getByLabel('Label (optional)').fill('from the console');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByLabel('Personal access token', { exact: true }).inputValue();
    expect(token).toMatch(/^pat_/);
    const id = token.slice(4, 16);
    await page.getByRole('row', { name: new RegExp(id) }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'keys-and-grants', [page.getByLabel('Personal access token', { exact: true })]);
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    expect(await page.content()).not.toContain(token);
    await page.getByRole('button', { name: `Revoke token ${id}` }).click();
    await page.getByText(`Token ${id} revoked.`).waitFor();
    const pats = await env.stack.admin<{ id: string; revoked_at: string | null }[]>('pat', 'list');
    expect(pats.find((p) => p.id === id)?.revoked_at).toEqual(expect.any(String));

    await page.getByLabel('Workspace', { exact: true }).fill('demo');
    await page.getByLabel('Agent', { exact: true }).fill(env.agentId);
    await page.getByLabel('Task', { exact: true }).fill('from-the-console');
    await page.getByLabel('Tools (comma-separated)').fill('echo');
    await page.getByRole('button', { name: 'Mint grant' }).click();
    expect(await page.getByLabel('RuntimeGrant (Authorization: Bearer)').inputValue()).toMatch(/^eyJ/);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Keys and grants' }).waitFor();
    expect(await page.getByLabel('RuntimeGrant (Authorization: Bearer)').count()).toBe(0);
    await context.close();
  });

  describe('OIDC login', () => {
    /** The browser's side: start at the console's OIDC route, log in at the provider as `user`, come back. */
    const oidcLogin = async (user: string, tamper?: (query: URLSearchParams, cookie: string) => string) => {
      const started = await fetch(`${ADMIN_URL}/admin/v1/session/oidc`, { redirect: 'manual' });
      expect(started.status).toBe(302);
      const flowCookie = started.headers.getSetCookie()[0];
      expect(flowCookie).toMatch(/^__Host-mcpgw_oidc=[^;]+; Path=\/; Secure; HttpOnly; SameSite=Lax; Max-Age=600$/);
      const authorize = new URL(started.headers.get('location')!);
      expect(authorize.origin).toBe(provider.issuer);
      for (const name of ['state', 'nonce', 'code_challenge']) expect(authorize.searchParams.get(name)).toBeTruthy();
      expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
      const back = await driveAuthorization(authorize, { user, redirectUrl: REDIRECT_URL });
      const query = new URLSearchParams({ code: back.code!, state: back.state! });
      let cookie = flowCookie.split(';')[0];
      if (tamper) cookie = tamper(query, cookie);
      const callback = await fetch(`${REDIRECT_URL}?${query}`, { redirect: 'manual', headers: { cookie } });
      const body = callback.status === 302 ? undefined : ((await callback.json()) as Record<string, unknown>);
      if (body) expect(checker.check('GET', '/admin/v1/session/oidc/callback', callback.status, body)).toEqual([]);
      return { status: callback.status, body, headers: callback.headers, query, cookie };
    };

    it('offers itself on the login page', async () => {
      const answer = await fetch(`${ADMIN_URL}/admin/v1/session/options`);
      const options = await answer.json();
      expect(checker.check('GET', '/admin/v1/session/options', answer.status, options)).toEqual([]);
      expect(options).toEqual({ token: true, oidc: { issuer: provider.issuer } });
    });

    it('an allowed subject logs in through the provider and gets the same session as a token login', async () => {
      const done = await oidcLogin('alice');
      expect(done.status, JSON.stringify(done.body)).toBe(302);
      expect(done.headers.get('location')).toBe('/console/');
      const cookies = done.headers.getSetCookie();
      // The flow's cookie cleared; the session (HttpOnly) and CSRF cookies set, as POST /admin/v1/session sets them.
      expect(cookies).toContainEqual(expect.stringMatching(/^__Host-mcpgw_oidc=; .*Max-Age=0$/));
      expect(cookies).toContainEqual(
        expect.stringMatching(/^__Host-mcpgw_admin=ads_\S+; Path=\/; Secure; SameSite=Strict; Max-Age=\d+; HttpOnly$/),
      );
      const csrfCookie = cookies.find((c) => c.startsWith('__Host-mcpgw_admin_csrf='))!;
      const session = cookies.filter((c) => c.startsWith('__Host-mcpgw_admin')).map((c) => c.split(';')[0]);
      const me = await fetch(`${ADMIN_URL}/admin/v1/session`, { headers: { cookie: session.join('; ') } });
      const who = (await me.json()) as { token_id: string; via: string };
      expect(who.via).toBe('session');
      const tokens = await env.stack.admin<{ id: string; label: string }[]>('console', 'token', 'list');
      expect(tokens.find((t) => t.id === who.token_id)?.label).toBe('oidc alice');
      // A change needs the CSRF token, like any session's.
      const csrf = csrfCookie.split(';')[0].split('=')[1];
      const withCsrf = await fetch(`${ADMIN_URL}/admin/v1/pats`, {
        method: 'POST',
        headers: { cookie: session.join('; '), 'content-type': 'application/json', 'x-csrf-token': csrf },
        body: '{}',
      });
      expect(withCsrf.status).toBe(201);
      const without = await fetch(`${ADMIN_URL}/admin/v1/pats`, {
        method: 'POST',
        headers: { cookie: session.join('; '), 'content-type': 'application/json' },
        body: '{}',
      });
      expect(without.status).toBe(403);
    });

    it('a subject that is not allowed is refused, with no session', async () => {
      const refused = await oidcLogin('bob');
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ error: { code: 'unauthorized' } });
      expect(refused.headers.getSetCookie().filter((c) => c.startsWith('__Host-mcpgw_admin'))).toEqual([]);
    });

    it("a state that is not this browser's flow's is refused before the code is used; so is a missing flow", async () => {
      let code = '';
      const mismatch = await oidcLogin('alice', (query, cookie) => {
        code = query.get('code')!;
        query.set('state', 'A'.repeat(43));
        return cookie;
      });
      expect(mismatch.status).toBe(400);
      expect(mismatch.body).toMatchObject({ error: { code: 'invalid_request' } });
      const noFlow = await oidcLogin('alice', () => '');
      expect(noFlow.status).toBe(400);
      // Another flow's cookie (an attacker's own login, planted) does not pass for this one.
      const other = await fetch(`${ADMIN_URL}/admin/v1/session/oidc`, { redirect: 'manual' });
      const planted = await oidcLogin('alice', () => other.headers.getSetCookie()[0].split(';')[0]);
      expect(planted.status).toBe(400);
      expect(code).not.toBe('');
    });

    it("an ID token whose nonce is not this flow's is refused", async () => {
      // The flow's cookie with another nonce: state and PKCE still pass, so only the nonce check can refuse.
      const otherNonce = await oidcLogin('alice', (_query, cookie) => {
        const at = cookie.indexOf('=');
        const flow = JSON.parse(Buffer.from(cookie.slice(at + 1), 'base64url').toString()) as Record<string, string>;
        const forged = Buffer.from(JSON.stringify({ ...flow, nonce: 'N'.repeat(43) })).toString('base64url');
        return `${cookie.slice(0, at)}=${forged}`;
      });
      expect(otherNonce.status).toBe(401);
      expect(otherNonce.body).toMatchObject({
        error: { code: 'unauthorized', message: expect.stringContaining('nonce') },
      });
    });

    it('a code is exchanged once', async () => {
      const first = await oidcLogin('alice');
      expect(first.status).toBe(302);
      const again = await fetch(`${REDIRECT_URL}?${first.query}`, {
        redirect: 'manual',
        headers: { cookie: first.cookie },
      });
      expect(again.status).toBe(401);
    });
  });
});
