import { FilesApi } from '@mcpgw/files-client';
import {
  freePort,
  parsePrometheus,
  startAuthorizationServer,
  startTestStack,
  type AuthorizationServer,
  type TestStack,
} from '@mcpgw/devstack';
import { createHash, randomBytes } from 'node:crypto';
import { Client as PgClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SIGNING_KEYS, localBackend, type Backend } from './support/file-backends';

type Answer = { status: number; headers: Headers; text: string; body: any };

/** The REST surface's invoke (apps/gateway/src/rest/README.md), over real HTTP against the running stack. */
describe('POST /api/v1/agents/{agent_id}/invoke and its grant twin', () => {
  let env: TestStack;
  let backend: Backend;
  let base: string;
  /** A real authorization server the gateway trusts (OAuth bearers on the REST routes). */
  let as: AuthorizationServer;

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    // Bad input gets its problem, never a stack trace.
    expect(text).not.toMatch(/\n\s+at |\.ts:\d+/);
    return { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
  };
  const invoke = (body: unknown, headers: Record<string, string> = {}) =>
    post(`/api/v1/agents/${env.agentId}/invoke`, body, { 'x-agent-api-key': env.apiKey, ...headers });
  const asTask = (grant: string, body: unknown) =>
    post(`/workspaces/demo/agents/${env.agentId}/invoke`, body, { authorization: `Bearer ${grant}` });
  const mint = async (task: string, tools: string[]) =>
    (
      await env.stack.admin<{ grant: string }>(
        'grant',
        'mint',
        '--workspace',
        'demo',
        '--agent',
        env.agentId,
        '--task',
        task,
        '--tools',
        tools.join(','),
      )
    ).grant;
  const expectProblem = (answer: Answer, status: number, code: number, type: string) => {
    expect(answer.status, answer.text).toBe(status);
    expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(answer.body).toMatchObject({ type: `urn:mcpgw:problem:${type}`, status, code, title: expect.any(String) });
    expect(typeof answer.body.detail).toBe('string');
  };

  beforeAll(async () => {
    backend = await localBackend();
    as = await startAuthorizationServer();
    // OAuth's resource identifiers start with the public base URL: the gateway's, known before it starts.
    const port = await freePort();
    env = await startTestStack({
      gatewayEnv: {
        ...backend.env(),
        FILES_URL_SIGNING_KEYS: SIGNING_KEYS,
        GATEWAY_PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        OAUTH_ISSUERS: as.issuer,
      },
    });
    base = env.gatewayUrls[0];
  });

  afterAll(async () => {
    await env?.stop();
    await backend?.stop();
    await as?.stop();
  });

  it('echo answers 200 with the structured output, the MCP content, and the call id', async () => {
    const answer = await invoke({ tool: 'echo', arguments: { text: 'hello over REST' } });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      call_id: expect.stringMatching(/^call_[0-9a-f]{32}$/),
      tool: 'echo',
      output: { text: 'hello over REST' },
      content: [{ type: 'text', text: 'hello over REST' }],
      is_error: false,
      created_at: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(answer.body.created_at))).toBe(false);
  });

  it('web_search answers its structured results; a caller-named call_id is kept', async () => {
    const answer = await invoke({
      tool: 'web_search',
      arguments: { query: 'nats', max_results: 2 },
      call_id: 'my-call-1',
    });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.call_id).toBe('my-call-1');
    expect(answer.body.output.results).toHaveLength(2);
    expect(answer.body.output.results[0]).toMatchObject({ title: 'Result 1 for nats' });
  });

  it('a tool error the model could correct is 200 with is_error, its text as output', async () => {
    const answer = await invoke({ tool: 'fail', arguments: { reason: 'nope' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ is_error: true, output: { text: 'fail: nope' } });
  });

  it('unknown tool: 404 -32601', async () => {
    expectProblem(await invoke({ tool: 'no_such_tool' }), 404, -32601, 'tool-not-found');
  });

  it("invalid arguments: 422 -32602 with the schema's errors", async () => {
    const answer = await invoke({ tool: 'web_search', arguments: { max_results: 99 } });
    expectProblem(answer, 422, -32602, 'invalid-arguments');
    expect(answer.body.errors.length).toBeGreaterThanOrEqual(2);
    expect(answer.body.errors.join(' ')).toMatch(/query/);
  });

  it('a body that is not JSON is 400 -32700; one of the wrong shape is 422 -32602', async () => {
    expectProblem(await invoke('{"tool":'), 400, -32700, 'malformed-body');
    expectProblem(await invoke({ tool: 'echo', extra: 1 }), 422, -32602, 'invalid-request');
    expectProblem(await invoke({ arguments: {} }), 422, -32602, 'invalid-request');
    expectProblem(await invoke({ tool: 'echo', arguments: [] }), 422, -32602, 'invalid-request');
    expectProblem(await invoke({ tool: 'echo', idempotency_key: '' }), 422, -32602, 'invalid-request');
    expectProblem(await invoke({ tool: 'echo', arguments: { idempotency_key: 'k' } }), 422, -32602, 'invalid-request');
    expectProblem(await invoke('[]'), 422, -32602, 'invalid-request');
  });

  it('agent timeout: 504 -32003 (Prefer: wait sets the timeout)', async () => {
    const answer = await invoke({ tool: 'sleep', arguments: { ms: 4_000 } }, { prefer: 'wait=1' });
    expectProblem(answer, 504, -32003, 'agent-timeout');
    expect(answer.body.detail).toBe('Agent reply timeout');
  });

  it('auth: no key or a wrong key is 401 -32001; a key of another agent is 401', async () => {
    expectProblem(await post(`/api/v1/agents/${env.agentId}/invoke`, { tool: 'echo' }), 401, -32001, 'unauthorized');
    expectProblem(await invoke({ tool: 'echo' }, { 'x-agent-api-key': 'bak_wrong' }), 401, -32001, 'unauthorized');
    const other = await env.addAgent('rest-other-agent');
    const answer = await post(
      `/api/v1/agents/${env.agentId}/invoke`,
      { tool: 'echo' },
      { 'x-agent-api-key': other.apiKey },
    );
    expectProblem(answer, 401, -32001, 'unauthorized');
  });

  it('an OAuth bearer invokes and lists tools; an invalid one is 401 with its problem and the challenge', async () => {
    const resource = `${base}/${env.agentId}/mcp`;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const invokePath = `/api/v1/agents/${env.agentId}/invoke`;
    const listTools = (headers: Record<string, string>) =>
      fetch(`${base}/api/v1/agents/${env.agentId}/tools`, { headers });

    const valid = await as.mintToken({ sub: 'rest-user', aud: resource });
    const ok = await post(invokePath, { tool: 'echo', arguments: { text: 'by bearer' } }, bearer(valid));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ tool: 'echo', output: { text: 'by bearer' }, is_error: false });
    const tools = await listTools(bearer(valid));
    expect(tools.status).toBe(200);
    expect(((await tools.json()) as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain('echo');

    // Not a token; a token of the trusted issuer for another resource (its audience is checked).
    const elsewhere = await as.mintToken({ sub: 'rest-user', aud: 'https://api.example.com' });
    for (const token of ['not-a-token', elsewhere]) {
      const refused = await post(invokePath, { tool: 'echo', arguments: { text: 'no' } }, bearer(token));
      expectProblem(refused, 401, -32001, 'unauthorized');
      expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer .*resource_metadata="/);
      const unlisted = await listTools(bearer(token));
      expect(unlisted.status).toBe(401);
      expect(unlisted.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await unlisted.json()).toMatchObject({
        type: 'urn:mcpgw:problem:unauthorized',
        status: 401,
        code: -32001,
      });
    }
  });

  it('an attachment reaches the agent through a signed URL', async () => {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7 rest\n'), randomBytes(5_000)]);
    const files = new FilesApi({ baseUrl: base, apiKey: env.apiKey });
    const fileId = await files.upload(bytes, { filename: 'q3.pdf', contentType: 'application/pdf' });
    const answer = await invoke({ tool: 'summarize_pdf', attachments: [{ file_id: fileId, filename: 'q3.pdf' }] });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.output.files[0]).toMatchObject({
      name: 'q3.pdf',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expectProblem(
      await invoke({ tool: 'summarize_pdf', attachments: [{ file_id: 'file_00000000000000000000000000000000' }] }),
      422,
      -32602,
      'invalid-arguments',
    );
  });

  it('the grant twin: its tools run; a tool outside its list is 404; a missing credential 403; a bad grant 401', async () => {
    const grant = await mint('rest-task-1', ['echo', 'crm_lookup']);
    const ok = await asTask(grant, { tool: 'echo', arguments: { text: 'as a task' } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.output).toEqual({ text: 'as a task' });
    expectProblem(
      await asTask(grant, { tool: 'web_search', arguments: { query: 'x' } }),
      404,
      -32601,
      'tool-not-found',
    );
    expectProblem(
      await asTask(grant, { tool: 'crm_lookup', arguments: { customer_id: 'C-1001' } }),
      403,
      -32001,
      'credential-unavailable',
    );
    expectProblem(await asTask('not-a-grant', { tool: 'echo' }), 401, -32001, 'unauthorized');
    expectProblem(
      await post(
        `/workspaces/other/agents/${env.agentId}/invoke`,
        { tool: 'echo' },
        { authorization: `Bearer ${grant}` },
      ),
      401,
      -32001,
      'unauthorized',
    );
  });

  it('a gateway without grant keys answers the grant twin 503', async () => {
    const unconfigured = await env.stack.startGateway({ GRANT_SIGNING_KEY_FILE: '/nonexistent/key.json' });
    const response = await fetch(`${unconfigured.url}/workspaces/demo/agents/${env.agentId}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
      body: JSON.stringify({ tool: 'echo' }),
    });
    expect(response.status).toBe(503);
    expect((await response.json()).type).toBe('urn:mcpgw:problem:unavailable');
  });

  it('metrics count the calls under surface="rest"', async () => {
    const text = await (await fetch(`${env.stack.managementUrlOf(base)}/metrics`)).text();
    const rest = parsePrometheus(text).filter(
      (s) => s.name === 'mcpgw_tool_calls_total' && s.labels.surface === 'rest',
    );
    const outcome = (tool: string, outcome: string) =>
      rest.find((s) => s.labels.tool === tool && s.labels.outcome === outcome)?.value ?? 0;
    expect(outcome('echo', 'ok')).toBeGreaterThanOrEqual(2);
    expect(outcome('fail', 'tool_error')).toBe(1);
    expect(outcome('sleep', 'agent_timeout')).toBe(1);
  });

  it('an internal failure is 500 -32603 with the incident id; the gateway keeps serving', async () => {
    // The idempotency records' table away: a keyed call cannot claim its key, an error no surface maps.
    const db = new PgClient({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    try {
      await db.query('ALTER TABLE gateway.idempotency_records RENAME TO idempotency_records_away');
      const answer = await invoke({ tool: 'echo', arguments: { text: 'x' }, idempotency_key: 'internal-1' });
      expectProblem(answer, 500, -32603, 'internal');
      expect(answer.body.request_id).toEqual(expect.any(String));
      expect(answer.body.detail).toBe(`Internal error (incident ${answer.body.request_id})`);
    } finally {
      await db.query('ALTER TABLE IF EXISTS gateway.idempotency_records_away RENAME TO idempotency_records');
      await db.end();
    }
    expect((await invoke({ tool: 'echo', arguments: { text: 'y' }, idempotency_key: 'internal-2' })).status).toBe(200);
  });

  it('the message service down: 503 -32603 with Retry-After; served again once it is back', async () => {
    const ms = env.stack.processes.find((p) => p.name.startsWith('message-service') && p.running)!;
    await ms.stop();
    try {
      const answer = await invoke({ tool: 'echo', arguments: { text: 'anyone?' } });
      expectProblem(answer, 503, -32603, 'unavailable');
      expect(answer.headers.get('retry-after')).toBe('1');
    } finally {
      await env.stack.startMessageService();
    }
    await vi.waitFor(
      async () => expect((await invoke({ tool: 'echo', arguments: { text: 'back' } })).status).toBe(200),
      {
        timeout: 15_000,
        interval: 200,
      },
    );
  });

  // Last: it leaves the agent a quota of one call per second.
  it('over a quota: 429 -32005 with Retry-After', async () => {
    await env.stack.admin('agent', 'quotas', '--agent', env.agentId, '--calls-per-second', '1');
    // Wait on state: the gateway applies the limit once it hears of the change.
    await vi.waitFor(
      async () => {
        await invoke({ tool: 'echo', arguments: { text: 'a' } });
        const second = await invoke({ tool: 'echo', arguments: { text: 'b' } });
        expectProblem(second, 429, -32005, 'quota-exceeded');
        expect(second.headers.get('retry-after')).toBe('1');
        expect(second.body).toMatchObject({ limit: 'calls_per_second', max: 1 });
      },
      { timeout: 10_000, interval: 200 },
    );
  });
});
