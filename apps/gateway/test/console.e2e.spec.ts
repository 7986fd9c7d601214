import { connectMcp, freePort, startTestStack, type TestStack } from '@mcpgw/devstack';
import type { Locator, Page } from '@playwright/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../src/admin-api/console-static';
import { screenshot } from './support/console-browser';
import { ConsoleSession } from './support/console-session';
import { until } from './support/until';
import { WebhookReceiver } from './support/webhook-receiver';

const RECEIVER_PORT = await freePort();
const ADMIN_PORT = await freePort();
const ENV = {
  WEBHOOK_SECRET_KEY: 'console-e2e-secret-key-0123456789abcdef',
  WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
};
const GATEWAY_ENV = { ADMIN_PORT: String(ADMIN_PORT), WEBHOOK_POLL_INTERVAL_MS: '100' };
const ORIGIN = `http://127.0.0.1:${ADMIN_PORT}`;

/**
 * The browser console (issue 29, step 2) in headless Chromium against a real
 * stack (PostgreSQL, NATS, gateway with ADMIN_PORT, agent pod): logged into
 * with a token the CLI minted, every page screenshotted (docs/console/) and
 * checked with axe; a key made in the page used by the MCP SDK client and
 * revoked there; a webhook delivery sent again; CSP and CSRF enforced.
 */
describe('console', () => {
  let env: TestStack;
  let receiver: WebhookReceiver;
  let session: ConsoleSession;
  let page: Page;
  let token: string;
  let hookId: string;
  let goneId: string;

  /** Open a console route (`#/…`), wait for its heading; check it with axe and screenshot it. */
  const visit = async (route: string, heading: string | RegExp, shot?: string) => {
    await page.goto(`/console/#${route}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    await expect.poll(() => page.getByText('Loading…').count()).toBe(0);
    await audit(shot);
  };
  /** Logged in on the overview (tests that run alone, with -t, log in themselves). */
  const loggedIn = async () => {
    await page.goto('/console/');
    const login = page.getByLabel('Admin token');
    const overview = page.getByRole('heading', { level: 1, name: 'Overview' });
    await login.or(overview).waitFor();
    if (await login.isVisible()) {
      await login.fill(token);
      await page.getByRole('button', { name: 'Log in' }).click();
      await overview.waitFor();
    }
  };
  const audit = (shot?: string, mask: Locator[] = []) => session.audit(shot, mask);

  beforeAll(async () => {
    env = await startTestStack({ env: ENV, gatewayEnv: GATEWAY_ENV });
    receiver = await new WebhookReceiver().on('/gone', () => 410).start(RECEIVER_PORT);
    token = (await env.stack.admin<{ token: string }>('console', 'token', '--label', 'console-e2e')).token;
    const add = (path: string) =>
      env.stack.admin<{ id: string }>(
        'webhook',
        'add',
        '--agent',
        env.agentId,
        '--url',
        receiver.url(path),
        '--events',
        'tool_call.completed',
      );
    hookId = (await add('/hooks')).id;
    goneId = (await add('/gone')).id;
    // One call: a delivery to /hooks, and a 410 from /gone, which disables that webhook.
    const mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    await mcp.client.callTool({ name: 'echo', arguments: { text: 'for the webhooks' } });
    await mcp.close();
    await until(() => receiver.at('/hooks').length === 1 && receiver.at('/gone').length === 1);
    session = await ConsoleSession.open(ORIGIN);
    page = session.page;
  });

  afterAll(async () => {
    await session?.close();
    await receiver?.stop();
    await env?.stop();
  });

  it('serves its pages with a strict Content-Security-Policy and no inline script', async () => {
    const response = await fetch(`${ORIGIN}/console/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toMatch(/default-src 'self'/);
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const html = await response.text();
    expect(html).toMatch(/<script type="module" crossorigin src="\/console\/assets\/[^"]+\.js"><\/script>/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect((await fetch(`${ORIGIN}/console/assets/nothing.js`)).status).toBe(404);
    expect((await fetch(`${ORIGIN}/console/../admin/v1/agents`)).status).toBe(401);
  });

  it('names its icon, so a page load asks for nothing the server does not have', async () => {
    const missing: string[] = [];
    const errors: string[] = [];
    const onResponse = (response: { status(): number; url(): string }) => {
      if (response.status() === 404) missing.push(response.url());
    };
    const onConsole = (message: { type(): string; text(): string }) => {
      // (The login page's own probe of the session is a 401, by design: not what this is about.)
      if (message.type() === 'error' && /\b404\b/.test(message.text())) errors.push(message.text());
    };
    page.on('response', onResponse);
    page.on('console', onConsole);
    try {
      await page.goto('/console/');
      await page.getByRole('heading', { name: 'MCP gateway console' }).waitFor();
      const icon = await page.locator('link[rel="icon"]').getAttribute('href');
      expect(icon).toBe('/console/favicon.svg');
      const served = await fetch(`${ORIGIN}${icon}`);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/svg+xml');
      expect(served.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      await page.waitForLoadState('networkidle');
    } finally {
      page.off('response', onResponse);
      page.off('console', onConsole);
    }
    expect(missing).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('blocks an inline script injected into a page, and the browser reports it', async () => {
    await page.goto('/console/');
    await page.getByRole('heading', { name: 'MCP gateway console' }).waitFor();
    const ran = await page.evaluate(async () => {
      const blocked = new Promise<string | null>((resolve) => {
        document.addEventListener('securitypolicyviolation', (event) => resolve(event.violatedDirective));
        setTimeout(() => resolve(null), 2_000);
      });
      const script = document.createElement('script');
      script.textContent = 'window.injected = true';
      document.body.append(script);
      return { injected: (window as { injected?: boolean }).injected ?? false, directive: await blocked };
    });
    // Without the header: { injected: true, directive: null }.
    expect(ran).toEqual({ injected: false, directive: 'script-src-elem' });
  });

  it('refuses a wrong token, and logs in with one the CLI minted (the token is not kept by the page)', async () => {
    await page.goto('/console/');
    await audit('login');
    await page.getByLabel('Admin token').fill(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`);
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/refused/);
    expect(await session.context.cookies()).toEqual([]);
    await screenshot(page, 'login-refused');

    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const cookies = await session.context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.secure, c.sameSite])).toEqual([
      ['__Host-mcpgw_admin', true, true, 'Strict'],
      ['__Host-mcpgw_admin_csrf', false, true, 'Strict'],
    ]);
    expect(await page.content()).not.toContain(token);
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    );
    expect(stored).not.toContain(token.slice(17));
  });

  it('shows an overview, the agents, and one agent with its pods, its tools and their JSON Schemas', async () => {
    // Its screenshot is console-playground.e2e's, taken once a call has filled the live figures.
    await visit('/', 'Overview');
    const agents = page.getByRole('definition').first();
    expect(await agents.textContent()).toBe('1');
    // The stack's pod registered and beats: its agent is online.
    const online = page.locator('.stat', { hasText: 'Agents online' }).getByRole('definition');
    expect(await online.textContent()).toBe('1');
    await visit('/agents', 'Agents', 'agents');
    const row = page.getByRole('row', { name: new RegExp(env.agentId) });
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('1'); // pods online
    await page.getByRole('link', { name: env.agentId }).click();
    await page.getByRole('heading', { level: 2, name: 'Pods (1 online of 1)' }).waitFor();
    const pod = page.getByRole('table', { name: "The agent's pods, the most recently seen first" }).getByRole('row', {
      name: /^pod-1 /,
    });
    expect(await pod.getByRole('cell').first().textContent()).toBe('online');
    expect(await pod.locator('time').count()).toBe(2); // last seen, registered
    await page.getByText('Last registration', { exact: true }).waitFor();
    await page.getByLabel('Filter tools by name').fill('echo');
    await page.getByRole('heading', { level: 3, name: 'echo', exact: true }).waitFor();
    await page.getByText('Input schema of echo', { exact: true }).click();
    const schema = JSON.parse((await page.getByLabel('JSON Schema of echo').textContent())!) as { type: string };
    expect(schema.type).toBe('object');
    await audit('agent');
    await visit('/no-such-page', 'Not found');
  });

  it('creates an API key shown once, which the MCP SDK client uses until the console revokes it', async () => {
    await visit(`/agents/${env.agentId}/keys`, `API keys of ${env.agentId}`);
    await page.getByLabel('Label (optional)').fill('from the console');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('API key (X-Agent-API-Key)');
    const key = await shown.inputValue();
    expect(key).toMatch(/^bak_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    // The screenshot masks the key: even a test stack's key is not kept in plain text.
    await audit('api-key-created', [shown]);
    const keyId = key.slice(4, 16);

    // Gone once the operator leaves the page, and after a reload: the server never had it to give again.
    await visit(`/agents/${env.agentId}/quotas`, `Quotas of ${env.agentId}`);
    await visit(`/agents/${env.agentId}/keys`, `API keys of ${env.agentId}`);
    await page.getByRole('rowheader', { name: keyId }).waitFor();
    expect(await page.content()).not.toContain(key.slice(17));
    await page.reload();
    await page.getByRole('rowheader', { name: keyId }).waitFor();
    expect(await page.content()).not.toContain(key.slice(17));
    await audit('api-keys');

    const mcp = await connectMcp(env.mcpUrl(), key);
    const result = await mcp.client.callTool({ name: 'echo', arguments: { text: 'with a console key' } });
    expect(JSON.stringify(result.content)).toContain('with a console key');
    await page.getByRole('button', { name: `Revoke key ${keyId}` }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/revoked/);
    await until(() =>
      mcp.client.callTool({ name: 'echo', arguments: { text: 'after revoke' } }).then(
        () => false,
        (error: Error) => /-32001.*invalid or revoked API key/.test(error.message),
      ),
    );
    await mcp.close().catch(() => undefined);
  });

  it('lists webhooks, enables a disabled one, and sends a delivery again with the same webhook-id', async () => {
    await until(async () => {
      const hooks = await env.stack.admin<{ id: string; disabled_at: string | null }[]>('webhook', 'list');
      return hooks.some((hook) => hook.id === goneId && hook.disabled_at !== null);
    });
    await visit('/webhooks', 'Webhooks', 'webhooks');
    await page.getByRole('button', { name: `Enable webhook ${goneId}` }).click();
    await page.getByRole('button', { name: `Enable webhook ${goneId}` }).waitFor({ state: 'detached' });
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/enabled again/);

    await page.getByRole('link', { name: `${hookId} deliveries` }).click();
    await page.getByRole('heading', { level: 1, name: `Deliveries of webhook ${hookId}` }).waitFor();
    // The first call's delivery, at the bottom (most recent first; the key test's calls made more).
    const delivered = page.locator('td[data-status="delivered"]');
    await delivered.first().waitFor();
    await audit('deliveries');
    const deliveryId = (await page.getByRole('rowheader').last().textContent())!;
    const before = receiver.at('/hooks');
    await page.getByRole('button', { name: `Redeliver delivery ${deliveryId}` }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/queued again/);
    await until(() => receiver.at('/hooks').length === before.length + 1);
    const again = receiver.at('/hooks').at(-1)!;
    expect(again.headers['webhook-id']).toBe(before[0].headers['webhook-id']);
  });

  it('shows and sets quotas, as the CLI then reads them', async () => {
    await visit(`/agents/${env.agentId}/quotas`, `Quotas of ${env.agentId}`);
    await page.getByLabel('Override of Open sessions').fill('5');
    await page.getByRole('button', { name: 'Save quotas' }).click();
    await expect.poll(() => page.locator('td[data-limit="sessions"]').textContent()).toBe('5');
    await audit('quotas');
    const quotas = await env.stack.admin<{ overrides: { sessions: number } }>(
      'agent',
      'quotas',
      '--agent',
      env.agentId,
    );
    expect(quotas.overrides.sessions).toBe(5);
  });

  it("refuses a change from the page's own context without the CSRF header (and takes it with)", async () => {
    await loggedIn();
    const patch = (withHeader: boolean) =>
      page.evaluate(
        async ({ agentId, withHeader }) => {
          const csrf = /__Host-mcpgw_admin_csrf=([^;]+)/.exec(document.cookie)?.[1] ?? '';
          const response = await fetch(`/admin/v1/agents/${agentId}/quotas`, {
            method: 'PATCH',
            headers: { 'content-type': 'application/json', ...(withHeader && { 'x-csrf-token': csrf }) },
            body: JSON.stringify({ sessions: 9 }),
          });
          return { status: response.status, body: (await response.json()) as { error?: { code: string } } };
        },
        { agentId: env.agentId, withHeader },
      );
    const refused = await patch(false);
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'csrf_failed' } } });
    expect((await patch(true)).status).toBe(200);
  });

  it('logs out: the session is refused from then on', async () => {
    await visit('/', 'Overview');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Admin token').waitFor();
    const status = await page.evaluate(async () => (await fetch('/admin/v1/agents')).status);
    expect(status).toBe(401);
  });

  it('used only routes of docs/admin-openapi.yaml, and every answer was valid by its schema', async () => {
    // Most answers were read and checked (a few bodies may be gone with their page).
    await session.expectDocumentedAnswers(
      [
        'POST /admin/v1/session',
        'GET /admin/v1/session',
        'DELETE /admin/v1/session',
        // The login page asks whether single sign-on is offered.
        'GET /admin/v1/session/options',
        'GET /admin/v1/agents',
        'GET /admin/v1/agents/{agentId}',
        'GET /admin/v1/agents/{agentId}/api-keys',
        'POST /admin/v1/agents/{agentId}/api-keys',
        'POST /admin/v1/api-keys/{keyId}/revoke',
        'GET /admin/v1/webhooks',
        'POST /admin/v1/webhooks/{webhookId}/enable',
        'GET /admin/v1/webhooks/{webhookId}/deliveries',
        'POST /admin/v1/webhook-deliveries/{deliveryId}/redeliver',
        'GET /admin/v1/agents/{agentId}/quotas',
        'PATCH /admin/v1/agents/{agentId}/quotas',
        // The overview's live figures (an event stream: its events are checked in console-playground.e2e).
        'GET /admin/v1/events',
      ],
      { mostRead: true },
    );
  });
});
