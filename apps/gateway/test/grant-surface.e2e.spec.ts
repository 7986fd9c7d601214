import { startTestStack, type TestStack } from '@mcpgw/devstack';
import {
  generateSigningJwk,
  grantAudience,
  importSigningKey,
  mintRuntimeGrant,
  publicJwk,
  type GrantRequest,
} from '@mcpgw/grants';
import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Answer = { status: number; body: any; headers: Headers };

/** Surface B, row by row of its contract (docs/grants.md, "Answers and errors"), over real HTTP against the running stack. */
describe('POST /workspaces/{ws}/agents/{agent}/mcp/http', () => {
  let env: TestStack;
  let db: Client;
  let unconfiguredUrl: string;
  const ws = 'demo';
  const agent = 'demo-agent';

  const path = (workspace = ws, agentId = agent) => `/workspaces/${workspace}/agents/${agentId}/mcp/http`;
  const url = (gateway = 0, p = path()) => `${env.gatewayUrls[gateway]}${p}`;

  const post = async (
    body: unknown,
    grant: string | undefined,
    options: { gateway?: number; path?: string } = {},
  ): Promise<Answer> => {
    const response = await fetch(url(options.gateway, options.path), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(grant ? { authorization: `Bearer ${grant}` } : {}) },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    expect(text).not.toMatch(/\n\s+at |\.ts:\d+/);
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  };

  const mint = async (task: string, tools: string[], extra: string[] = []) =>
    await env.stack.admin<{ id: string; grant: string }>(
      'grant',
      'mint',
      '--workspace',
      ws,
      '--agent',
      agent,
      '--task',
      task,
      '--tools',
      tools.join(','),
      ...extra,
    );

  const mintWithKey = async (
    overrides: Partial<GrantRequest>,
    jwk = JSON.parse(readFileSync(env.grantKeyFile, 'utf8')),
  ) =>
    (
      await mintRuntimeGrant(
        { workspaceId: ws, agentId: agent, taskId: 't', tools: ['echo'], ttlSeconds: 60, ...overrides },
        await importSigningKey(jwk),
      )
    ).token;

  /**
   * A grant signed by hand with the gateway's own key, every claim right unless
   * `claims` says otherwise: `aud` (undefined: none), the issue time.
   */
  const signedByHand = async (claims: { aud?: string; iat?: number } = {}) => {
    const jwk = JSON.parse(readFileSync(env.grantKeyFile, 'utf8'));
    const { key, kid } = await importSigningKey(jwk);
    const iat = claims.iat ?? Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({ ws, agt: agent, tsk: 't', tools: ['echo'], creds: [] })
      .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'rg+jwt' })
      .setJti(randomUUID())
      .setIssuer('mcpgw')
      .setIssuedAt(iat)
      .setExpirationTime(iat + 60);
    if (claims.aud !== undefined) jwt.setAudience(claims.aud);
    return jwt.sign(key);
  };
  /** Every claim right but an issue time an hour ahead (a forged or mis-clocked minter). */
  const issuedInTheFuture = () =>
    signedByHand({ aud: grantAudience(ws, agent), iat: Math.floor(Date.now() / 1000) + 3_600 });

  const list = { jsonrpc: '2.0', id: 'req_list', method: 'tools/list' };
  const call = (name: string, args: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id: 'req_call',
    method: 'tools/call',
    params: { name, arguments: args, ...extra },
  });

  let grant: string; // task T1: echo, web_search, screenshot, fail, sleep, counter, crm_lookup (+crm)

  beforeAll(async () => {
    env = await startTestStack({ gateways: 2 });
    unconfiguredUrl = (await env.stack.startGateway({ GRANT_SIGNING_KEY_FILE: '/nonexistent/key.json' })).url;
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    grant = (
      await mint(
        'T1',
        ['echo', 'web_search', 'screenshot', 'fail', 'sleep', 'counter', 'crm_lookup'],
        ['--credentials', 'crm'],
      )
    ).grant;
  });

  afterAll(async () => {
    await db?.end();
    await env?.stop();
  });

  describe('authorization: 401 -32001', () => {
    const cases: [string, () => Promise<Answer>][] = [
      ['no Authorization header', () => post(list, undefined)],
      [
        'a scheme other than Bearer',
        () =>
          fetch(url(), {
            method: 'POST',
            headers: { authorization: `Basic ${grant}` },
            body: JSON.stringify(list),
          }).then(asAnswer),
      ],
      ['a malformed grant', () => post(list, 'not.a.grant')],
      ['an expired grant', async () => post(list, await mintWithKey({ ttlSeconds: -5 }))],
      ['a grant issued in the future', async () => post(list, await issuedInTheFuture())],
      [
        'a grant that lives longer than GRANT_MAX_TTL_SECONDS',
        async () => post(list, await mintWithKey({ ttlSeconds: 90_000 })),
      ],
      [
        'a grant signed by a key this gateway does not know',
        async () => post(list, await mintWithKey({}, await generateSigningJwk())),
      ],
      [
        'a grant for another audience (aud), signed with the right key',
        async () => post(list, await signedByHand({ aud: 'https://billing.example.com/api' })),
      ],
      ['a grant naming no audience (aud)', async () => post(list, await signedByHand({}))],
      ['a grant for another workspace than the path', async () => post(list, grant, { path: path('other-ws') })],
      ['a grant for another agent than the path', async () => post(list, grant, { path: path(ws, 'other-agent') })],
      ['an agent API key', () => post(list, env.apiKey)],
    ];
    it.each(cases)('%s', async (_what, send) => {
      const answer = await send();
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32001 } });
    });

    it('the same hand-signed grant naming this surface as its audience is accepted (the control)', async () => {
      const answer = await post(list, await signedByHand({ aud: grantAudience(ws, agent) }));
      expect(answer.status).toBe(200);
      expect(answer.body.result.tools.map((tool: { name: string }) => tool.name)).toEqual(['echo']);
    });

    it('a personal access token, with a message that names the reason', async () => {
      const pat = await env.stack.admin<{ token: string }>('pat', 'create', '--label', 'someone');
      expect(pat.token).toMatch(/^pat_/);
      const answer = await post(list, pat.token);
      expect(answer.status).toBe(401);
      expect(answer.body.error).toMatchObject({
        code: -32001,
        message: expect.stringContaining('personal access token'),
      });
    });

    it('two Authorization headers, even both valid', async () => {
      const answer = await rawPost(url(), JSON.stringify(list), {
        authorization: [`Bearer ${grant}`, `Bearer ${grant}`],
      });
      expect(answer.status).toBe(401);
      expect(answer.body.error).toMatchObject({ code: -32001, message: expect.stringContaining('exactly one') });
    });

    it('echoes the request id in a 401', async () => {
      expect((await post({ ...list, id: 77 }, undefined)).body.id).toBe(77);
    });

    it('a revoked grant is refused within a second, on a second gateway too', async () => {
      const { id, grant: revocable } = await mint('T-revoke', ['echo']);
      for (const gateway of [0, 1]) expect((await post(list, revocable, { gateway })).status).toBe(200);
      await env.stack.admin('grant', 'revoke', id);
      const revokedAt = Date.now();
      for (const gateway of [0, 1]) {
        let status = 200;
        while (status === 200 && Date.now() - revokedAt < 1_000)
          status = (await post(list, revocable, { gateway })).status;
        expect(status).toBe(401);
      }
      expect((await post(list, revocable, { gateway: 1 })).body.error.message).toContain('revoked');
    });
  });

  describe('the request body', () => {
    it('an unparseable body is 400 -32700 with a null id', async () => {
      const answer = await post('{"jsonrpc":"2.0","id":5,', grant);
      expect(answer).toMatchObject({ status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32700 } } });
    });

    it.each([
      ['an unknown top-level field', { ...list, extra: true }, -32600],
      ['jsonrpc "1.0"', { ...list, jsonrpc: '1.0' }, -32600],
      ['no jsonrpc', { id: 1, method: 'tools/list' }, -32600],
      ['a batch', [list], -32600],
      ['an id that is an object', { ...list, id: { a: 1 } }, -32600],
      ['an unsupported method', { ...list, method: 'resources/list' }, -32601],
      ['initialize (not part of this contract)', { ...list, method: 'initialize' }, -32601],
      ['tools/list with non-empty params', { ...list, params: { cursor: 'x' } }, -32602],
      ['tools/list with array params', { ...list, params: [] }, -32602],
      ['tools/list with string params', { ...list, params: 'x' }, -32602],
      ['tools/call without a name', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } }, -32602],
      ['tools/call with a numeric name', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 5 } }, -32602],
      ['tools/call with array arguments', call('echo', [] as never), -32602],
      ['tools/call with string arguments', call('echo', 'x' as never), -32602],
      ['tools/call without params', { jsonrpc: '2.0', id: 1, method: 'tools/call' }, -32602],
      ['tools/call with a numeric call_id', call('echo', { text: 'x' }, { call_id: 5 }), -32602],
    ])('%s is 400 %i', async (_what, body, code) => {
      const answer = await post(body, grant);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe(code);
    });

    it.each([[undefined], [null], [{}]])('tools/list accepts params %j', async (params) => {
      const answer = await post(params === undefined ? list : { ...list, params }, grant);
      expect(answer.status).toBe(200);
    });

    it.each([
      ['a string id', 'req_x'],
      ['a number id', 42],
      ['no id', undefined],
    ])('echoes %s', async (_what, id) => {
      const answer = await post({ ...list, id }, grant);
      expect(answer.body.id).toBe(id ?? null);
    });

    it('a body over the size limit is 413 -32600, refused while it streams in', async () => {
      const limit = 1_048_576;
      const big = JSON.stringify(call('echo', { text: 'x'.repeat(limit) }));
      const whole = await post(big, grant);
      expect(whole.status).toBe(413);
      expect(whole.body.error.code).toBe(-32600);
      // Chunked, never finished: the answer comes once the limit is passed, before the body ends.
      const streamed = await streamUntilAnswered(url(), grant, limit + 64 * 1024);
      expect(streamed.status).toBe(413);
      expect(streamed.body.error.code).toBe(-32600);
    });
  });

  describe('tools/list', () => {
    it("returns only the grant's tools, named or by id, each field exactly when set", async () => {
      const all = (await post(list, grant)).body.result.tools as Record<string, unknown>[];
      const crm = all.find((t) => t.name === 'crm_lookup')!;
      const narrow = (await mint('T-narrow', [String(crm.id), 'echo'])).grant;
      const tools = (await post(list, narrow)).body.result.tools as Record<string, unknown>[];
      expect(tools.map((t) => t.name).sort()).toEqual(['crm_lookup', 'echo']);

      expect(Object.keys(crm).sort()).toEqual(
        ['_meta', 'description', 'id', 'input_schema', 'kind', 'name', 'output_schema', 'side_effect_class'].sort(),
      );
      expect(crm).toMatchObject({ kind: 'function', side_effect_class: 'read', _meta: { 'mcpgw/source': 'mock-crm' } });
      const echo = tools.find((t) => t.name === 'echo')!;
      expect(Object.keys(echo).sort()).toEqual(
        ['description', 'id', 'input_schema', 'name', 'side_effect_class'].sort(),
      );
      expect(echo.id).toMatch(/^[0-9a-f-]{36}$/);
      const counter = all.find((t) => t.name === 'counter')!;
      expect(counter.side_effect_class).toBe('write');
    });

    it("a grant for task T1 cannot see or call task T2's tools", async () => {
      const t1 = (await mint('T1-only', ['echo'])).grant;
      const t2 = (await mint('T2-only', ['web_search'])).grant;
      expect((await post(list, t1)).body.result.tools.map((t: { name: string }) => t.name)).toEqual(['echo']);
      expect((await post(list, t2)).body.result.tools.map((t: { name: string }) => t.name)).toEqual(['web_search']);
      const answer = await post(call('web_search', { query: 'x' }), t1);
      expect(answer).toMatchObject({ status: 422, body: { error: { code: -32002 } } });
    });
  });

  describe('tools/call', () => {
    it('a success carries structuredContent and content[0].text per the contract', async () => {
      const answer = await post(call('crm_lookup', { customer_id: 'C-1001' }, { call_id: 'call_01' }), grant);
      expect(answer.status).toBe(200);
      const { structuredContent, content } = answer.body.result;
      expect(structuredContent).toMatchObject({
        call_id: 'call_01',
        tool_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        output: { found: true, customer: { id: 'C-1001', name: 'Acme Corp' } },
        metadata: { pod_id: 'pod-1' },
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      expect(structuredContent.artifacts).toBeUndefined();
      expect(JSON.parse(content[0].text)).toEqual({
        call_id: 'call_01',
        tool_id: structuredContent.tool_id,
        output: structuredContent.output,
      });
      expect(answer.body.id).toBe('req_call');
    });

    it('generates a call_id when the caller sends none, and lists non-text content as artifacts', async () => {
      const answer = await post(call('screenshot'), grant);
      const structured = answer.body.result.structuredContent;
      expect(structured.call_id).toMatch(/^call_[0-9a-f]{32}$/);
      expect(structured.artifacts).toEqual([expect.objectContaining({ type: 'image', mimeType: 'image/png' })]);
    });

    it('arguments failing the input schema are 200 with isError and the validation messages', async () => {
      const answer = await post(call('crm_lookup', { customer_id: 'nope' }), grant);
      expect(answer.status).toBe(200);
      expect(answer.body.result.isError).toBe(true);
      expect(answer.body.result.content[0].text).toContain('/customer_id must match pattern');
    });

    it('a tool missing from the grant is 422 -32002, and so is one never registered', async () => {
      const narrow = (await mint('T-echo', ['echo', 'no_such_tool'])).grant;
      for (const name of ['web_search', 'no_such_tool']) {
        const answer = await post(call(name, { query: 'x' }), narrow);
        expect(answer).toMatchObject({ status: 422, body: { error: { code: -32002 } } });
      }
    });

    it('a tool whose credential the grant lacks is 401 -32003', async () => {
      const noCrm = (await mint('T-no-crm', ['crm_lookup'])).grant;
      const answer = await post(call('crm_lookup', { customer_id: 'C-1001' }), noCrm);
      expect(answer).toMatchObject({
        status: 401,
        body: { error: { code: -32003, message: expect.stringContaining('crm') } },
      });
    });

    it("the agent's own tool error is a 200 isError result", async () => {
      const answer = await post(call('fail', { reason: 'disk full' }), grant);
      expect(answer.status).toBe(200);
      expect(answer.body.result).toEqual({ content: [{ type: 'text', text: 'fail: disk full' }], isError: true });
    });

    it('an agent that does not answer in time is 503 -32002', async () => {
      const answer = await post(call('sleep', { ms: 2_000 }, { _meta: { 'mcpgw/timeoutMs': 200 } }), grant);
      expect(answer).toMatchObject({ status: 503, body: { error: { code: -32002 } } });
    });

    it("idempotency keys of two tasks' grants never collide; one task's retries replay", async () => {
      const counterKey = `grant-scope-${Date.now()}`;
      const args = { key: counterKey, idempotency_key: 'same-key' };
      const t1 = (await mint('T-idem-1', ['counter'])).grant;
      const t2 = (await mint('T-idem-2', ['counter'])).grant;
      const first = await post(call('counter', args), t1);
      const other = await post(call('counter', args), t2);
      const retry = await post(call('counter', args), t1);
      expect(first.body.result.structuredContent.output.count).toBe(1);
      expect(other.body.result.structuredContent.output.count).toBe(2);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(retry.body.result.structuredContent).toEqual(first.body.result.structuredContent);
    });
  });

  describe('the gateway itself', () => {
    it('accepts grants signed by either key during a rotation, chosen by kid, and no others', async () => {
      const current = JSON.parse(readFileSync(env.grantKeyFile, 'utf8'));
      const next = await generateSigningJwk('next-key');
      const rotating = await env.stack.startGateway({
        GRANT_VERIFICATION_KEYS: JSON.stringify([publicJwk(current), publicJwk(next)]),
      });
      const statusWith = async (token: string) =>
        (
          await fetch(`${rotating.url}${path()}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify(list),
          })
        ).status;
      expect(await statusWith(await mintWithKey({}, current))).toBe(200);
      expect(await statusWith(await mintWithKey({}, next))).toBe(200);
      expect(await statusWith(await mintWithKey({}, await generateSigningJwk('stranger')))).toBe(401);
    });

    it('keeps every tool id when the agent registers again', async () => {
      const ids = async () =>
        ((await post(list, grant)).body.result.tools as { name: string; id: string }[])
          .map((t) => `${t.name}=${t.id}`)
          .sort();
      const before = await ids();
      await env.stack.startPod({ POD_ID: 'pod-again' });
      expect(await ids()).toEqual(before);
    });

    it('without grant keys it answers 503 -32002 (not configured)', async () => {
      const response = await fetch(`${unconfiguredUrl}${path()}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
        body: JSON.stringify(list),
      });
      expect(response.status).toBe(503);
      expect((await response.json()).error.code).toBe(-32002);
    });

    it('an unclassified failure is 500 -32000 with a request id, also in the logs', async () => {
      await db.query(`ALTER TABLE gateway.idempotency_records RENAME TO idempotency_records_away`);
      try {
        const answer = await post(call('echo', { text: 'x', idempotency_key: 'k-500' }), grant);
        expect(answer.status).toBe(500);
        expect(answer.body.error).toMatchObject({ code: -32000, data: { request_id: expect.any(String) } });
        const requestId = answer.body.error.data.request_id;
        expect(answer.headers.get('x-request-id')).toBe(requestId);
        const gateway = env.stack.serving(env.gatewayUrls[0]);
        await gateway.waitForLog((line) => line.request_id === requestId, 2_000);
      } finally {
        await db.query(`ALTER TABLE gateway.idempotency_records_away RENAME TO idempotency_records`);
      }
    });

    it('the bus or the message service unreachable is 503 -32002', async () => {
      await env.stack.processes.find((p) => p.name.startsWith('message-service'))!.stop();
      const answer = await post(call('echo', { text: 'anyone?' }), grant);
      expect(answer).toMatchObject({ status: 503, body: { error: { code: -32002 } } });
    });
  });
});

async function asAnswer(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** One request with exactly these header lines (fetch would merge repeated headers). */
function rawPost(
  target: string,
  body: string,
  headers: Record<string, string | string[]>,
): Promise<Omit<Answer, 'headers'>> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      target,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Stream a chunked body past `bytes` and never end it; resolve with the answer that comes anyway. */
function streamUntilAnswered(target: string, grant: string, bytes: number): Promise<Omit<Answer, 'headers'>> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', authorization: `Bearer ${grant}` },
    });
    const timer = setTimeout(() => reject(new Error('no answer before the body ended')), 10_000);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () => {
        clearTimeout(timer);
        req.destroy();
        resolve({ status: res.statusCode!, body: JSON.parse(text) });
      });
    });
    req.on('error', () => undefined); // the server may close the socket on us: the answer is what counts
    const chunk = 'x'.repeat(16 * 1024);
    req.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"');
    for (let sent = 0; sent < bytes; sent += chunk.length) req.write(chunk);
  });
}
