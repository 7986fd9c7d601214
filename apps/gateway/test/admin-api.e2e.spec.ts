import { createAgent, defineSkill } from '@mcpgw/agent-sdk';
import { connectMcp, freePort, startTestStack, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseChecker, loadAdminOpenApi, routesTestedBy } from './support/admin-openapi';
import { readEvents } from './support/sse-events';
import { until } from './support/until';
import { WebhookReceiver } from './support/webhook-receiver';

interface Minted {
  id: string;
  token: string;
  label: string | null;
  expires_at: string | null;
}
interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}
type Json = Record<string, unknown> & { items?: Record<string, unknown>[] };

const RECEIVER_PORT = await freePort();
const ADMIN_PORT = await freePort();
/** The admin CLI and the gateway share the webhook settings (the CLI adds the webhook). */
const ENV = {
  WEBHOOK_SECRET_KEY: 'admin-api-e2e-secret-key-0123456789abcdef',
  WEBHOOK_ALLOWED_HOSTS: `127.0.0.1:${RECEIVER_PORT}`,
};
const GATEWAY_ENV = { ADMIN_PORT: String(ADMIN_PORT), WEBHOOK_POLL_INTERVAL_MS: '100' };
const ADMIN_URL = `http://127.0.0.1:${ADMIN_PORT}`;

/**
 * The management API (issue 29, first step) on a real stack: tokens minted with
 * the CLI, every answer checked against docs/admin-openapi.yaml, keys made here
 * used by the official MCP SDK client, a webhook delivery sent again.
 */
describe('management API', () => {
  const doc = loadAdminOpenApi();
  const checker = new ResponseChecker(doc);
  let env: TestStack;
  let receiver: WebhookReceiver;
  let token: Minted;

  /** A request to the management API; its answer must be the document's for that route and status. */
  const admin = async <T = Json>(
    method: string,
    route: string,
    options: {
      params?: Record<string, string>;
      query?: string;
      body?: unknown;
      raw?: string;
      auth?: string | null;
      type?: string;
      /** A browser session instead of the bearer header: its cookies, and the CSRF header to send. */
      cookie?: string;
      csrf?: string;
    } = {},
  ): Promise<Answer<T>> => {
    const path =
      route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(options.params![name])) +
      (options.query ? `?${options.query}` : '');
    const auth = options.auth === undefined && !options.cookie ? `Bearer ${token.token}` : (options.auth ?? null);
    const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    const response = await fetch(`${ADMIN_URL}${path}`, {
      method,
      headers: {
        ...(auth !== null && { authorization: auth }),
        ...(payload !== undefined && { 'content-type': options.type ?? 'application/json' }),
        ...(options.cookie !== undefined && { cookie: options.cookie }),
        ...(options.csrf !== undefined && { 'x-csrf-token': options.csrf }),
      },
      body: payload,
    });
    const body = (await response.json()) as T;
    expect(checker.check(method, route, response.status, body)).toEqual([]);
    expect(response.headers.get('cache-control')).toBe('no-store');
    return { status: response.status, body, headers: response.headers };
  };
  const cli = <T>(...args: string[]) => env.stack.admin<T>(...args);

  beforeAll(async () => {
    env = await startTestStack({ env: ENV, gatewayEnv: GATEWAY_ENV });
    receiver = await new WebhookReceiver().start(RECEIVER_PORT);
    token = await cli<Minted>('console', 'token', '--label', 'e2e');
  });

  afterAll(async () => {
    await receiver?.stop();
    await env?.stop();
  });

  describe('admin tokens', () => {
    it('are minted by the CLI, shown once, and listed without the token', async () => {
      expect(token.token).toMatch(/^adm_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
      expect(token.label).toBe('e2e');
      // 30 days unless told otherwise.
      expect(Date.parse(token.expires_at!) - Date.now()).toBeGreaterThan(29 * 86_400_000);
      const listed = await cli<Record<string, unknown>[]>('console', 'token', 'list');
      expect(listed.find((t) => t.id === token.id)).toMatchObject({ label: 'e2e', revoked_at: null });
      expect(JSON.stringify(listed)).not.toContain(token.token.slice(17));
      expect((await admin('GET', '/admin/v1/agents')).status).toBe(200);
    });

    it('a missing, malformed, wrong or unknown token gets 401 with the same JSON error', async () => {
      const [, id] = /^adm_(.{12})_/.exec(token.token)!;
      const wrongSecret = `adm_${id}_${'A'.repeat(43)}`;
      const unknownId = `adm_${'B'.repeat(12)}_${token.token.slice(-43)}`;
      for (const auth of [null, '', 'Bearer', `Basic ${token.token}`, 'Bearer adm_short', wrongSecret, unknownId]) {
        const refused = await admin('GET', '/admin/v1/agents', { auth });
        expect(refused.status, String(auth)).toBe(401);
        expect(refused.body).toMatchObject({ error: { code: 'unauthorized' } });
        expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="mcpgw-admin"');
      }
    });

    it('a revoked token is refused from its next request on; an expired one too', async () => {
      const other = await cli<Minted>('console', 'token', '--label', 'to-revoke');
      const auth = `Bearer ${other.token}`;
      expect((await admin('GET', '/admin/v1/agents', { auth })).status).toBe(200);
      const revoked = await cli<Record<string, unknown>>('console', 'token', 'revoke', other.id);
      expect(revoked.revoked_at).toEqual(expect.any(String));
      expect((await admin('GET', '/admin/v1/agents', { auth })).status).toBe(401);

      const short = await cli<Minted>('console', 'token', '--ttl', '1');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await admin('GET', '/admin/v1/agents', { auth: `Bearer ${short.token}` })).status).toBe(401);
      // The first token still works: refusals are per token.
      expect((await admin('GET', '/admin/v1/agents')).status).toBe(200);
    });

    it('never reach the logs in plain text; the audit line names the token by its id', async () => {
      await admin('GET', '/admin/v1/agents');
      const logs = env.stack.serving(env.gatewayUrls[0]).logs;
      expect(JSON.stringify(logs)).not.toContain(token.token.slice(17));
      expect(logs).toContainEqual(
        expect.objectContaining({ msg: 'admin request', token_id: token.id, route: '/admin/v1/agents', status: 200 }),
      );
    });
  });

  describe('browser sessions', () => {
    /** Log in with an admin token: the Cookie header the browser would send back, and the CSRF token. */
    const login = async (adminToken = token.token) => {
      const answer = await admin('POST', '/admin/v1/session', { body: { token: adminToken }, auth: null });
      expect(answer.status).toBe(201);
      const set = answer.headers.getSetCookie();
      return {
        answer,
        set,
        cookie: set.map((c) => c.split(';', 1)[0]).join('; '),
        csrf: answer.body.csrf_token as string,
      };
    };
    const quotas = (agentId: string) => ({ params: { agentId }, body: { streams: 7 } });

    it('a login with a token sets an HttpOnly session cookie and a CSRF cookie; a wrong token gets 401', async () => {
      const { answer, set, csrf } = await login();
      expect(answer.body).toMatchObject({ token_id: token.id, via: 'session' });
      const [session, csrfCookie] = set;
      expect(session).toMatch(
        /^__Host-mcpgw_admin=ads_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}; Path=\/; Secure; SameSite=Strict; Max-Age=\d+; HttpOnly$/,
      );
      expect(csrfCookie).toMatch(
        new RegExp(`^__Host-mcpgw_admin_csrf=${csrf}; Path=/; Secure; SameSite=Strict; Max-Age=\\d+$`),
      );
      const wrong = await admin('POST', '/admin/v1/session', {
        body: { token: `${token.token.slice(0, -1)}x` },
        auth: null,
      });
      expect(wrong.status).toBe(401);
      expect(wrong.headers.getSetCookie()).toEqual([]);
      const none = await admin('POST', '/admin/v1/session', { body: {}, auth: null });
      expect(none.status).toBe(401);
    });

    it('reads with the cookie alone; every change needs X-CSRF-Token equal to its CSRF cookie', async () => {
      const { cookie, csrf } = await login();
      const other = await login();
      const me = await admin('GET', '/admin/v1/session', { cookie });
      expect(me.body).toMatchObject({ token_id: token.id, via: 'session', expires_at: expect.any(String) });
      expect((await admin('GET', '/admin/v1/agents', { cookie })).status).toBe(200);
      const route = '/admin/v1/agents/{agentId}/quotas';
      for (const sent of [undefined, '', `${csrf}x`, other.csrf]) {
        const refused = await admin('PATCH', route, { ...quotas(env.agentId), cookie, csrf: sent });
        expect(refused.status, String(sent)).toBe(403);
        expect(refused.body).toMatchObject({ error: { code: 'csrf_failed' } });
      }
      // The CSRF cookie of another session, sent with that session's token, does not pass for this session.
      const mixed = `${cookie.split('; ')[0]}; ${other.cookie.split('; ')[1]}`;
      expect((await admin('PATCH', route, { ...quotas(env.agentId), cookie: mixed, csrf: other.csrf })).status).toBe(
        403,
      );
      const done = await admin('PATCH', route, { ...quotas(env.agentId), cookie, csrf });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ overrides: { streams: 7 } });
      // The bearer header needs no CSRF token (no browser sends it by itself).
      expect((await admin('GET', '/admin/v1/session')).body).toEqual({
        token_id: token.id,
        via: 'token',
        expires_at: null,
      });
    });

    it('a session ends when its token is revoked, and at logout', async () => {
      const other = await cli<Minted>('console', 'token', '--label', 'browser');
      const first = await login(other.token);
      const second = await login(other.token);
      const out = await admin('DELETE', '/admin/v1/session', { cookie: first.cookie, csrf: first.csrf });
      expect(out.body).toEqual({ ended: true });
      expect(out.headers.getSetCookie().every((c) => /Max-Age=0/.test(c))).toBe(true);
      expect((await admin('GET', '/admin/v1/agents', { cookie: first.cookie })).status).toBe(401);
      expect((await admin('GET', '/admin/v1/agents', { cookie: second.cookie })).status).toBe(200);
      await cli('console', 'token', 'revoke', other.id);
      expect((await admin('GET', '/admin/v1/agents', { cookie: second.cookie })).status).toBe(401);
      expect((await admin('DELETE', '/admin/v1/session')).body).toEqual({ ended: false });
      // Neither the session nor its CSRF token ever reaches the logs.
      const logs = JSON.stringify(env.stack.serving(env.gatewayUrls[0]).logs);
      for (const secret of [first.cookie.split('=')[1].slice(17, 60), first.csrf]) expect(logs).not.toContain(secret);
    });
  });

  it('is not served on the public MCP port', async () => {
    const response = await fetch(`${env.gatewayUrls[0]}/admin/v1/agents`, {
      headers: { authorization: `Bearer ${token.token}` },
    });
    expect(response.status).toBe(404);
  });

  it('lists agents and shows one with its tools and their schemas, as the CLI does', async () => {
    const listed = await admin('GET', '/admin/v1/agents');
    expect(listed.body.items).toEqual(await cli('agent', 'list'));
    expect(listed.body.items).toContainEqual(expect.objectContaining({ id: env.agentId, workspace_id: 'demo' }));
    const shown = await admin('GET', '/admin/v1/agents/{agentId}', { params: { agentId: env.agentId } });
    const echo = (shown.body.tools as { name: string; definition: { input_schema: object } }[]).find(
      (tool) => tool.name === 'echo',
    );
    expect(echo?.definition.input_schema).toMatchObject({ type: 'object' });
    expect(shown.body.auth_methods).toEqual({ api_keys: true, oauth: true });
    const missing = await admin('GET', '/admin/v1/agents/{agentId}', { params: { agentId: 'no-such-agent' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: { code: 'not_found', message: 'no agent no-such-agent' } });
  });

  it('creates an API key shown once, which an MCP client uses until it is revoked', async () => {
    const params = { agentId: env.agentId };
    const created = await admin('POST', '/admin/v1/agents/{agentId}/api-keys', { params, body: { label: 'api' } });
    expect(created.status).toBe(201);
    const key = created.body.key as string;
    const listed = await admin('GET', '/admin/v1/agents/{agentId}/api-keys', { params });
    expect(listed.body.items).toContainEqual(expect.objectContaining({ id: created.body.id, revoked_at: null }));
    expect(JSON.stringify(listed.body)).not.toContain(key);

    const mcp = await connectMcp(env.mcpUrl(), key);
    const result = await mcp.client.callTool({ name: 'echo', arguments: { text: 'through a key of the API' } });
    expect(JSON.stringify(result.content)).toContain('through a key of the API');

    const revoked = await admin('POST', '/admin/v1/api-keys/{keyId}/revoke', {
      params: { keyId: created.body.id as string },
    });
    expect(revoked.body).toMatchObject({ id: created.body.id, revoked_at: expect.any(String) });
    // Every gateway hears of it through PostgreSQL NOTIFY, within moments: the session's next call is refused.
    await until(async () => {
      const refused = await mcp.client.callTool({ name: 'echo', arguments: { text: 'after revoke' } }).then(
        () => false,
        (error: Error) => /-32001.*invalid or revoked API key/.test(error.message),
      );
      return refused;
    }, 5_000);
    await expect(connectMcp(env.mcpUrl(), key)).rejects.toThrow(/invalid or revoked API key/);
    await mcp.close().catch(() => undefined);
  });

  it('lists webhooks and deliveries, sends a delivery again with the same webhook-id, enables a webhook', async () => {
    const hook = await cli<{ id: string }>(
      'webhook',
      'add',
      '--agent',
      env.agentId,
      '--url',
      receiver.url('/hooks'),
      '--events',
      'tool_call.completed',
    );
    const mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    await mcp.client.callTool({ name: 'echo', arguments: { text: 'for the webhook' } });
    await mcp.close();
    await until(() => receiver.at('/hooks').length === 1);

    const hooks = await admin('GET', '/admin/v1/webhooks');
    expect(hooks.body.items).toContainEqual(expect.objectContaining({ id: hook.id, owner: null }));
    const byAgent = await admin('GET', '/admin/v1/webhooks', { query: `agent_id=${env.agentId}` });
    expect(byAgent.body.items!.map((h) => h.id)).toContain(hook.id);
    const ofAnother = await admin('GET', '/admin/v1/webhooks', { query: 'agent_id=another-agent' });
    expect(ofAnother.body.items).toEqual([]);

    const params = { webhookId: hook.id };
    let deliveries = await admin('GET', '/admin/v1/webhooks/{webhookId}/deliveries', { params });
    await until(async () => {
      deliveries = await admin('GET', '/admin/v1/webhooks/{webhookId}/deliveries', { params });
      return deliveries.body.items![0]?.status === 'delivered';
    });
    const [delivery] = deliveries.body.items!;
    expect(deliveries.body.items).toEqual(await cli('webhook', 'deliveries', '--webhook', hook.id));

    const again = await admin('POST', '/admin/v1/webhook-deliveries/{deliveryId}/redeliver', {
      params: { deliveryId: delivery.id as string },
    });
    expect(again.body).toMatchObject({ id: delivery.id, status: 'pending', attempts: 0 });
    await until(() => receiver.at('/hooks').length === 2);
    const [first, second] = receiver.at('/hooks');
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);

    const enabled = await admin('POST', '/admin/v1/webhooks/{webhookId}/enable', { params });
    expect(enabled.body).toMatchObject({ id: hook.id, disabled_at: null });
    const missing = await admin('POST', '/admin/v1/webhook-deliveries/{deliveryId}/redeliver', {
      params: { deliveryId: 'no-such-delivery' },
    });
    expect(missing.body).toMatchObject({ error: { code: 'not_found' } });
  });

  it('shows and sets quotas, as the CLI does; bad input is a documented 400, never a stack trace', async () => {
    const params = { agentId: env.agentId };
    const route = '/admin/v1/agents/{agentId}/quotas';
    const shown = await admin('GET', route, { params });
    expect(shown.body).toEqual(await cli('agent', 'quotas', '--agent', env.agentId));
    const set = await admin('PATCH', route, { params, body: { sessions: 5, streams: 0 } });
    expect(set.body).toMatchObject({ limits: { sessions: 5, streams: 0 }, overrides: { sessions: 5, streams: 0 } });
    expect(await cli('agent', 'quotas', '--agent', env.agentId)).toEqual(set.body);
    const back = await admin('PATCH', route, { params, body: { sessions: null } });
    expect(back.body).toMatchObject({ overrides: { sessions: null, streams: 0 } });

    for (const [body, message] of [
      [{ sessions: -1 }, /sessions must be a whole number/],
      [{ sessions: 1.5 }, /sessions must be a whole number/],
      [{ sessions: '5' }, /sessions must be a whole number/],
      [{ session: 5 }, /unknown field\(s\) session/],
      [[1], /a JSON object/],
    ] as const) {
      const refused = await admin('PATCH', route, { params, body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body).toMatchObject({
        error: { code: 'invalid_request', message: expect.stringMatching(message) },
      });
    }
    const notJson = await admin('PATCH', route, { params, raw: '{"sessions": ' });
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ error: { code: 'invalid_request' } });
    expect(JSON.stringify(notJson.body)).not.toMatch(/\n\s+at /);
    const otherType = await admin('PATCH', route, { params, raw: 'sessions=5', type: 'text/plain' });
    expect(otherType.status).toBe(415);
    expect(otherType.body).toMatchObject({ error: { code: 'unsupported_media_type' } });
    const missing = await admin('PATCH', route, { params: { agentId: 'no-such-agent' }, body: { sessions: 1 } });
    expect(missing.status).toBe(404);
    // Text PostgreSQL would refuse (a NUL), a repeated query parameter, a huge id: 400 before any query.
    for (const [method, path, query, body] of [
      ['GET', '/admin/v1/agents/{agentId}', undefined, undefined],
      ['PATCH', route, undefined, { sessions: 1 }],
    ] as const) {
      for (const agentId of ['bad\u0000id', 'x'.repeat(300)]) {
        const refused = await admin(method, path, { params: { agentId }, query, body });
        expect(refused.status, `${method} ${path} ${agentId.slice(0, 8)}`).toBe(400);
        expect(refused.body).toMatchObject({ error: { code: 'invalid_request' } });
      }
    }
    const twice = await admin('GET', '/admin/v1/webhooks', { query: 'agent_id=a&agent_id=b' });
    expect(twice.body).toMatchObject({
      error: { code: 'invalid_request', message: expect.stringContaining('agent_id') },
    });
    const label = await admin('POST', '/admin/v1/agents/{agentId}/api-keys', {
      params: { agentId: env.agentId },
      body: { label: 'a\u0000b' },
    });
    expect(label.body).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('label') } });
    const wrongMethod = await fetch(`${ADMIN_URL}/admin/v1/agents`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token.token}` },
    });
    expect(wrongMethod.status).toBe(404);
    expect(await wrongMethod.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('streams live events and a playground call, each event valid by its schema (more: console-playground.e2e)', async () => {
    const headers = { authorization: `Bearer ${token.token}`, 'content-type': 'application/json' };
    const [ready] = await readEvents(await fetch(`${ADMIN_URL}/admin/v1/events`, { headers }), () => true);
    expect(checker.checkEvent('GET', '/admin/v1/events', ready.event, ready.data)).toEqual([]);
    const url = `${ADMIN_URL}/admin/v1/agents/${env.agentId}/playground/calls`;
    const body = JSON.stringify({ tool: 'echo', arguments: { text: 'played' } });
    const events = await readEvents(await fetch(url, { method: 'POST', headers, body }));
    const route = '/admin/v1/agents/{agentId}/playground/calls';
    for (const { event, data } of events) expect(checker.checkEvent('POST', route, event, data)).toEqual([]);
    expect(events.map((e) => e.event)).toEqual(['started', 'result']);
  });

  it('holds, approves and rejects tool changes, and lists the audit trail (the CLI agrees)', async () => {
    const agentId = 'admin-api-pinned';
    await env.addAgent(agentId);
    const params = { agentId };
    const policy = await admin<{ effective: string }>('PATCH', '/admin/v1/agents/{agentId}/tool-change-policy', {
      params,
      body: { tool_changes: 'hold' },
    });
    expect(policy.body).toEqual({ agent_id: agentId, tool_changes: 'hold', effective: 'hold' });
    expect((await admin('GET', '/admin/v1/agents/{agentId}/tool-change-policy', { params })).body).toEqual(policy.body);

    const skill = (description: string) =>
      defineSkill({
        name: 'note',
        description,
        inputSchema: { type: 'object', properties: {} },
        run: async () => 'ok',
      });
    const agent = await createAgent({
      agentId,
      skills: [skill('Takes a note')],
      natsUrl: env.nats!.url,
      natsCreds: await env.nats!.credsFile({ role: 'agent', agentId }),
      busPrefix: env.stack.settings.busPrefix,
      handleSignals: false,
      env: {},
    });
    try {
      await agent.start();
      type Changes = { items: { version: number; status: string; diff: { tool: string; kind: string }[] }[] };
      const pending = () => admin<Changes>('GET', '/admin/v1/tool-changes', { query: `agent=${agentId}` });
      expect((await pending()).body.items).toMatchObject([
        { version: 1, status: 'pending', diff: [{ tool: 'note', kind: 'new' }] },
      ]);
      expect(await cli('tools', 'changes', '--agent', agentId)).toEqual((await pending()).body.items);
      const approved = await admin('POST', '/admin/v1/agents/{agentId}/tool-changes/{version}/approve', {
        params: { agentId, version: '1' },
      });
      expect(approved.body).toMatchObject({ version: 1, status: 'approved', decided_by: `admin:${token.id}` });
      await agent.update({ skills: [skill('Takes a note, and mails it elsewhere')] });
      expect((await pending()).body.items).toMatchObject([{ version: 2, status: 'pending' }]);
      const rejected = await admin('POST', '/admin/v1/agents/{agentId}/tool-changes/{version}/reject', {
        params: { agentId, version: '2' },
      });
      expect(rejected.body).toMatchObject({ version: 2, status: 'rejected' });
      // Not pending any more: 400.
      expect(
        (
          await admin('POST', '/admin/v1/agents/{agentId}/tool-changes/{version}/approve', {
            params: { agentId, version: '2' },
          })
        ).status,
      ).toBe(400);
    } finally {
      await agent.stop();
    }

    type Audit = { items: { principal: string; outcome: string; detail: { action?: string } | null }[] };
    const trail = () =>
      admin<Audit>('GET', '/admin/v1/audit', {
        query: `agent=${agentId}&kind=admin_action&caller=${encodeURIComponent(`admin:${token.id}`)}`,
      });
    // Written off the request path (every AUDIT_FLUSH_INTERVAL_MS): wait for the four.
    let items = (await trail()).body.items;
    for (const deadline = Date.now() + 10_000; items.length < 4 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      items = (await trail()).body.items;
    }
    expect(items.map((item) => [item.detail?.action, item.outcome])).toEqual([
      ['POST /admin/v1/agents/:agentId/tool-changes/:version/approve', 'refused'],
      ['POST /admin/v1/agents/:agentId/tool-changes/:version/reject', 'ok'],
      ['POST /admin/v1/agents/:agentId/tool-changes/:version/approve', 'ok'],
      ['PATCH /admin/v1/agents/:agentId/tool-change-policy', 'ok'],
    ]);
    expect(items.every((item) => item.principal === `admin:${token.id}`)).toBe(true);
    expect((await admin('GET', '/admin/v1/audit', { query: 'kind=nonsense' })).status).toBe(400);
  });

  it('answered every documented operation at least once, valid against its schema', () => {
    // Runs last: the tests above went through every route (but those another file answers, x-tested-by).
    expect([...checker.succeeded].sort()).toEqual([...routesTestedBy(doc, 'admin-api.e2e.spec.ts')].sort());
  });
});
