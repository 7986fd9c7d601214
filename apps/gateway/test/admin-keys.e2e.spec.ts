import { connectMcp, freePort, startTestStack, type TestStack } from '@mcpgw/devstack';
import { connect, credsAuthenticator } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseChecker, loadAdminOpenApi, routesTestedBy } from './support/admin-openapi';

const ADMIN_PORT = await freePort();
const ADMIN_URL = `http://127.0.0.1:${ADMIN_PORT}`;
const GATEWAY_ENV = {
  ADMIN_PORT: String(ADMIN_PORT),
  CONVERSATION_HANDLE_SECRET: 'an-admin-keys-test-secret-of-at-least-32-characters',
};
const VERSION = '2026-07-28';

type Json = Record<string, any>;

/**
 * Keys and grants, NATS credentials and the records of an agent's traffic on
 * the management API (issue 29), on a real stack: a grant minted here calls a
 * tool on the task-scoped surface and is refused once revoked here; NATS
 * credentials issued here connect to the stack's nats-server and are cut off
 * when revoked here; the sessions, idempotency records and tasks of real calls
 * are listed as the CLI lists them. Every answer is checked against
 * docs/admin-openapi.yaml.
 */
describe('management API: keys, grants, credentials, records', () => {
  const doc = loadAdminOpenApi();
  const checker = new ResponseChecker(doc);
  let env: TestStack;
  let auth: string;

  const admin = async (
    method: string,
    route: string,
    options: { params?: Json; query?: string; body?: unknown } = {},
  ) => {
    const path =
      route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(options.params![name])) +
      (options.query ? `?${options.query}` : '');
    const response = await fetch(`${ADMIN_URL}${path}`, {
      method,
      headers: {
        authorization: auth,
        ...(options.body !== undefined && { 'content-type': 'application/json' }),
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const body = (await response.json()) as Json;
    expect(checker.check(method, route, response.status, body)).toEqual([]);
    return { status: response.status, body };
  };
  const cli = <T = Json>(...args: string[]) => env.stack.admin<T>(...args);
  const grantCall = async (grant: string) => {
    const response = await fetch(`${env.gatewayUrls[0]}/workspaces/demo/agents/${env.agentId}/mcp/http`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', call_id: `c-${Date.now()}`, arguments: { text: 'by grant' } },
      }),
    });
    return response.status;
  };

  beforeAll(async () => {
    env = await startTestStack({ gatewayEnv: GATEWAY_ENV });
    auth = `Bearer ${(await cli<{ token: string }>('console', 'token', '--label', 'keys-e2e')).token}`;
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('mints a RuntimeGrant shown once that calls a tool, revokes it, and the next call is refused', async () => {
    const minted = await admin('POST', '/admin/v1/grants', {
      body: { workspace_id: 'demo', agent_id: env.agentId, task_id: 'keys-e2e', tools: ['echo'], ttl_seconds: 600 },
    });
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ agent_id: env.agentId, task_id: 'keys-e2e', tools: ['echo'], credentials: [] });
    // The CLI's `grant mint` is the same operation: the same fields.
    const byCli = await cli(
      'grant',
      'mint',
      '--workspace',
      'demo',
      '--agent',
      env.agentId,
      '--task',
      't',
      '--tools',
      'echo',
    );
    expect(Object.keys(byCli).sort()).toEqual(Object.keys(minted.body).sort());

    expect(await grantCall(minted.body.grant)).toBe(200);
    const revoked = await admin('POST', '/admin/v1/grants/{grantId}/revoke', { params: { grantId: minted.body.id } });
    expect(revoked.body).toMatchObject({ grant_id: minted.body.id });
    await expect.poll(() => grantCall(minted.body.grant), { timeout: 10_000 }).toBe(401);

    for (const [body, message] of [
      [{ workspace_id: 'other', agent_id: env.agentId, task_id: 't', tools: ['echo'] }, /is in workspace demo/],
      [{ workspace_id: 'demo', agent_id: env.agentId, task_id: 't', tools: [] }, /tools/],
      [{ workspace_id: 'demo', agent_id: env.agentId, task_id: 't', tools: ['echo'], ttl_seconds: 1e9 }, /ttl/],
      [{ workspace_id: 'demo', agent_id: env.agentId, task_id: 't', tools: 'echo' }, /tools/],
      [{ workspace_id: 'demo', agent_id: env.agentId, tools: ['echo'] }, /task_id is required/],
      [{ workspace_id: 'demo', agent_id: env.agentId, task_id: 't', tools: ['echo'], scope: 'x' }, /unknown field/],
    ] as const) {
      const refused = await admin('POST', '/admin/v1/grants', { body });
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.message).toMatch(message);
    }
    const notUuid = await admin('POST', '/admin/v1/grants/{grantId}/revoke', { params: { grantId: 'nope' } });
    expect(notUuid.status).toBe(400);
  });

  it('creates a personal access token shown once, lists it without the token (as the CLI does), revokes it', async () => {
    const created = await admin('POST', '/admin/v1/pats', { body: { label: 'ci' } });
    expect(created.status).toBe(201);
    expect(created.body.token).toMatch(new RegExp(`^pat_${created.body.id}_[A-Za-z0-9_-]{43}$`));
    const listed = await admin('GET', '/admin/v1/pats');
    expect(listed.body.items).toContainEqual({
      id: created.body.id,
      label: 'ci',
      created_at: expect.any(String),
      revoked_at: null,
    });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token.slice(17));
    expect(await cli('pat', 'list')).toEqual(listed.body.items);
    const revoked = await admin('POST', '/admin/v1/pats/{patId}/revoke', { params: { patId: created.body.id } });
    expect(revoked.body.revoked_at).toEqual(expect.any(String));
    const again = await admin('POST', '/admin/v1/pats/{patId}/revoke', { params: { patId: created.body.id } });
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
    expect((await admin('POST', '/admin/v1/pats/{patId}/revoke', { params: { patId: 'nope' } })).status).toBe(404);
  });

  it("issues NATS credentials that connect, lists them, and revoking them closes the pod's connection", async () => {
    const issued = await admin('POST', '/admin/v1/agents/{agentId}/nats-credentials', {
      params: { agentId: env.agentId },
      body: { ttl_seconds: 3600 },
    });
    expect(issued.status).toBe(201);
    expect(issued.body.creds).toContain('BEGIN NATS USER JWT');
    const nc = await connect({
      servers: env.nats!.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(issued.body.creds)),
    });
    const closed = nc.closed();
    const listed = await admin('GET', '/admin/v1/nats-credentials', { query: `agent_id=${env.agentId}` });
    expect(listed.body.items).toContainEqual(expect.objectContaining({ user: issued.body.user, revoked_at: null }));
    expect(JSON.stringify(listed.body)).not.toContain('SUA');
    expect(await cli('agent', 'credentials', 'list', '--agent', env.agentId)).toEqual(listed.body.items);

    const revoked = await admin('POST', '/admin/v1/nats-credentials/revoke', { body: { user: issued.body.user } });
    expect(revoked.body).toEqual({ revoked: [issued.body.user] });
    await closed;
    expect(nc.isClosed()).toBe(true);
    for (const body of [{}, { user: 'not-a-key' }, { agent_id: env.agentId, user: issued.body.user }]) {
      expect((await admin('POST', '/admin/v1/nats-credentials/revoke', { body })).status, JSON.stringify(body)).toBe(
        400,
      );
    }
    const unknown = await admin('POST', '/admin/v1/agents/{agentId}/nats-credentials', {
      params: { agentId: 'nobody' },
    });
    expect(unknown.status).toBe(404);
  });

  it("lists the agent's MCP sessions and idempotency records as the CLI does; shows one record", async () => {
    const mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    const key = `keys-e2e-${Date.now()}`;
    await mcp.client.callTool({ name: 'echo', arguments: { text: 'once', idempotency_key: key } });
    const params = { agentId: env.agentId };
    const sessions = await admin('GET', '/admin/v1/agents/{agentId}/mcp-sessions', { params, query: 'open=true' });
    expect(sessions.body.items).toContainEqual(expect.objectContaining({ principal: env.apiKeyId, ended_at: null }));
    expect(await cli('session', 'list', '--agent', env.agentId, '--open')).toEqual(sessions.body.items);
    await mcp.close();

    const records = await admin('GET', '/admin/v1/agents/{agentId}/idempotency-records', { params });
    const record = records.body.items.find((r: Json) => r.key === key);
    expect(record).toMatchObject({ tool_id: expect.any(String), replayable: true });
    expect(await cli('idempotency', 'list', '--agent', env.agentId)).toEqual(records.body.items);
    const shown = await admin('GET', '/admin/v1/agents/{agentId}/idempotency-records/{caller}/{key}', {
      params: { ...params, caller: record.caller, key },
    });
    expect(shown.body).toMatchObject({
      ...record,
      message: { tool_call: { name: 'echo', arguments: { text: 'once' } } },
    });
    expect(JSON.parse(shown.body.result)).toMatchObject({ content: expect.any(Array) });
    const missing = await admin('GET', '/admin/v1/agents/{agentId}/idempotency-records/{caller}/{key}', {
      params: { ...params, caller: record.caller, key: 'no-such-key' },
    });
    expect(missing.status).toBe(404);
    for (const query of ['limit=0', 'limit=501', 'limit=x']) {
      const refused = await admin('GET', '/admin/v1/agents/{agentId}/mcp-sessions', { params, query });
      expect(refused.status, query).toBe(400);
    }
    expect(
      (await admin('GET', '/admin/v1/agents/{agentId}/mcp-sessions', { params: { agentId: 'nobody' } })).status,
    ).toBe(404);
  });

  it("lists the agent's tasks and shows one, as the CLI does", async () => {
    const response = await fetch(env.mcpUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': env.apiKey,
        'mcp-protocol-version': VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'long_report',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': VERSION,
            'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
            'io.modelcontextprotocol/clientInfo': { name: 'keys-e2e', version: '1.0.0' },
          },
          name: 'long_report',
          arguments: { seconds: 3 },
        },
      }),
    });
    const created = (await response.json()) as Json;
    const taskId = created.result?.taskId;
    expect(taskId, JSON.stringify(created)).toEqual(expect.any(String));
    const params = { agentId: env.agentId };
    const listed = await admin('GET', '/admin/v1/agents/{agentId}/tasks', { params });
    expect(listed.body.items).toContainEqual(expect.objectContaining({ id: taskId, tool: 'long_report' }));
    let shown = await admin('GET', '/admin/v1/tasks/{taskId}', { params: { taskId } });
    await expect
      .poll(
        async () => {
          shown = await admin('GET', '/admin/v1/tasks/{taskId}', { params: { taskId } });
          return shown.body.status;
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe('completed');
    expect(shown.body.result).toEqual(expect.any(Object));
    expect(await cli('task', 'show', taskId)).toEqual(shown.body);
    const after = await admin('GET', '/admin/v1/agents/{agentId}/tasks', { params });
    expect(await cli('task', 'list', '--agent', env.agentId)).toEqual(after.body.items);
    const working = await admin('GET', '/admin/v1/agents/{agentId}/tasks', { params, query: 'status=working' });
    expect(working.body.items.map((t: Json) => t.id)).not.toContain(taskId);
    expect((await admin('GET', '/admin/v1/agents/{agentId}/tasks', { params, query: 'status=done' })).status).toBe(400);
    expect((await admin('GET', '/admin/v1/tasks/{taskId}', { params: { taskId: 'nope' } })).status).toBe(404);
  });

  it('answered every operation this file is named for (x-tested-by), valid against its schema', () => {
    expect([...checker.succeeded].sort()).toEqual([...routesTestedBy(doc, 'admin-keys.e2e.spec.ts')].sort());
  });
});
