import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { importSigningKey, mintRuntimeGrant } from '@mcpgw/grants';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Access control as a matrix (issue 10): every HTTP endpoint of the stack
 * against every credential that must not open it. Each credential is
 * presented everywhere an endpoint might look for one (`X-Agent-API-Key` and
 * `Authorization: Bearer`), and each refusal must be the documented status
 * and code. None of these requests may reach the agent: everything an agent
 * is sent is a stored chat_message first, and across the whole matrix none is
 * stored; one call with the agent's key afterwards stores one and gets its
 * answer (the control).
 */

const WORKSPACE = 'demo';
const OTHER_WORKSPACE = 'acl-other-ws';
const OTHER_AGENT = 'acl-other-agent';
const STATELESS = '2026-07-28';
const STATELESS_META = {
  'io.modelcontextprotocol/protocolVersion': STATELESS,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'access-control-test', version: '1.0.0' },
};

interface Endpoint {
  name: string;
  /** The refusal a bad credential gets here. */
  refusal: { status: number; code?: number };
  send(credential: string | undefined): Promise<Response>;
}

describe('access control: every endpoint refuses every credential that does not open it', () => {
  let env: TestStack;
  const credentials = new Map<string, string | undefined>();
  let endpoints: Endpoint[];
  let db: Client;

  /** Messages sent to agents so far (each is stored before it is delivered). */
  const chatMessages = async () =>
    Number(
      (await db.query<{ n: string }>(`SELECT count(*) AS n FROM messaging.messages WHERE type = 'chat_message'`))
        .rows[0].n,
    );

  const bothHeaders = (credential: string | undefined): Record<string, string> =>
    credential === undefined ? {} : { 'x-agent-api-key': credential, authorization: `Bearer ${credential}` };

  beforeAll(async () => {
    env = await startTestStack();
    db = new Client({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    const admin = env.stack.admin.bind(env.stack);

    await admin('agent', 'create', '--id', OTHER_AGENT, '--workspace', OTHER_WORKSPACE);
    const otherKey = await admin<{ key: string }>('apikey', 'create', '--agent', OTHER_AGENT);
    const revokedKey = await admin<{ id: string; key: string }>('apikey', 'create', '--agent', env.agentId);
    await admin('apikey', 'revoke', revokedKey.id);
    const mint = (workspace: string, agent: string) =>
      admin<{ id: string; grant: string }>(
        'grant',
        'mint',
        '--workspace',
        workspace,
        '--agent',
        agent,
        '--task',
        'acl',
        '--tools',
        'echo',
      );
    const otherWorkspaceGrant = await mint(OTHER_WORKSPACE, OTHER_AGENT);
    const revokedGrant = await mint(WORKSPACE, env.agentId);
    await admin('grant', 'revoke', revokedGrant.id);
    const expiredGrant = await mintRuntimeGrant(
      { workspaceId: WORKSPACE, agentId: env.agentId, taskId: 'acl', tools: ['echo'], ttlSeconds: -60 },
      await importSigningKey(JSON.parse(readFileSync(env.grantKeyFile, 'utf8'))),
    );
    const pat = await admin<{ token: string }>('pat', 'create', '--label', 'acl');

    credentials.set('no credential', undefined);
    credentials.set("another agent's API key", otherKey.key);
    credentials.set("another workspace's grant", otherWorkspaceGrant.grant);
    credentials.set('an expired grant', expiredGrant.token);
    credentials.set('a revoked grant', revokedGrant.grant);
    credentials.set('a personal access token', pat.token);
    credentials.set('a revoked API key', revokedKey.key);

    const gateway = env.gatewayUrls[0];
    const agentUrl = env.mcpUrl();
    const grantUrl = `${gateway}/workspaces/${WORKSPACE}/agents/${env.agentId}/mcp/http`;
    const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const unauthorized = { status: 401, code: -32001 };
    endpoints = [
      {
        name: 'surface A: POST tools/call (2026-07-28, no session needed)',
        refusal: unauthorized,
        send: (credential) =>
          fetch(agentUrl, {
            method: 'POST',
            headers: {
              ...mcpHeaders,
              'mcp-protocol-version': STATELESS,
              'mcp-method': 'tools/call',
              'mcp-name': 'echo',
              ...bothHeaders(credential),
            },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'echo', arguments: { text: 'acl' }, _meta: STATELESS_META },
            }),
          }),
      },
      {
        name: 'surface A: POST initialize',
        refusal: unauthorized,
        send: (credential) =>
          fetch(agentUrl, {
            method: 'POST',
            headers: { ...mcpHeaders, ...bothHeaders(credential) },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'initialize',
              params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'acl', version: '1' } },
            }),
          }),
      },
      {
        name: 'surface A: GET (the stream)',
        refusal: unauthorized,
        send: (credential) =>
          fetch(agentUrl, {
            headers: { accept: 'text/event-stream', 'mcp-session-id': 'any', ...bothHeaders(credential) },
          }),
      },
      {
        name: 'surface A: DELETE (end a session)',
        refusal: unauthorized,
        send: (credential) =>
          fetch(agentUrl, { method: 'DELETE', headers: { 'mcp-session-id': 'any', ...bothHeaders(credential) } }),
      },
      {
        name: 'surface B: POST tools/call',
        refusal: unauthorized,
        send: (credential) =>
          fetch(grantUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...bothHeaders(credential) },
            body: JSON.stringify({
              jsonrpc: '2.0',
              id: 'acl',
              method: 'tools/call',
              params: { name: 'echo', arguments: { text: 'acl' } },
            }),
          }),
      },
      {
        name: 'message service REST mirror: POST /channels',
        refusal: { status: 401 },
        send: (credential) =>
          fetch(`${env.messageServiceUrl}/channels`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...bothHeaders(credential) },
            body: JSON.stringify({ agent_id: env.agentId }),
          }),
      },
      {
        name: 'message service REST mirror: POST /channels/:id/messages',
        refusal: { status: 401 },
        send: (credential) =>
          fetch(`${env.messageServiceUrl}/channels/00000000-0000-4000-8000-000000000000/messages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...bothHeaders(credential) },
            body: JSON.stringify({ type: 'chat_message', tool_call: { name: 'echo', arguments: { text: 'acl' } } }),
          }),
      },
      ...webhookEndpoints(`${gateway}/api/v1/agents/${env.agentId}/webhooks`, bothHeaders),
    ];

    // Both were revoked before their first use, so no gateway should ever accept them; check
    // that both are refused before the matrix counts what was sent.
    for (const [endpoint, credential] of [
      [endpoints[0], revokedKey.key],
      [endpoints[4], revokedGrant.grant],
    ] as const) {
      const status = (await endpoint.send(credential)).status;
      if (status !== 401) throw new Error(`${endpoint.name}: a revoked credential got HTTP ${status}`);
    }
  });

  afterAll(async () => {
    await db?.end();
    await env?.stop();
  });

  it('refuses each pair with the documented status and code, and nothing reaches the agent', async () => {
    const before = await chatMessages();
    const wrong: string[] = [];
    let pairs = 0;
    for (const endpoint of endpoints) {
      for (const [what, credential] of credentials) {
        const answer = await endpoint.send(credential);
        const text = await answer.text();
        pairs++;
        const code = endpoint.refusal.code === undefined ? undefined : codeOf(text);
        if (answer.status !== endpoint.refusal.status || code !== endpoint.refusal.code) {
          wrong.push(`${endpoint.name} with ${what}: HTTP ${answer.status} ${text.slice(0, 200)}`);
        }
        expect(text).not.toMatch(/\n\s+at /); // no stack trace in any body
      }
    }
    expect(wrong).toEqual([]);
    expect(pairs).toBe(endpoints.length * credentials.size);
    expect(await chatMessages()).toBe(before);
    const webhooks = await db.query(`SELECT count(*)::int AS n FROM gateway.webhooks`);
    expect(webhooks.rows[0].n).toBe(0);
  });

  it("the control: the agent's own key opens surface A, and its call is stored and answered", async () => {
    const before = await chatMessages();
    const answer = await endpoints[0].send(env.apiKey);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain('acl');
    expect(await chatMessages()).toBe(before + 1);
  });

  it("agent auth --api-keys off: the agent's own key is refused until they are on again", async () => {
    /** Surface A with the agent's key until `done` holds (the switch reaches the gateway as a notice). */
    const until = async (done: (status: number, text: string) => boolean) => {
      for (const started = Date.now(); ;) {
        const answer = await endpoints[0].send(env.apiKey);
        const text = await answer.text();
        if (done(answer.status, text) || Date.now() - started > 10_000) return { status: answer.status, text };
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const off = await env.stack.admin<{ api_keys: boolean; oauth: boolean }>(
      'agent',
      'auth',
      '--agent',
      env.agentId,
      '--api-keys',
      'off',
    );
    expect(off).toMatchObject({ api_keys: false, oauth: true });
    try {
      const refused = await until((status) => status === 401);
      expect(refused.status).toBe(401);
      expect(codeOf(refused.text)).toBe(-32001);
      expect(refused.text).toContain('this agent takes no API keys');
      // The files endpoint names no agent: the key's own agent's switch holds there too.
      const presign = await fetch(`${env.gatewayUrls[0]}/api/v1/files/presign-upload`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-agent-api-key': env.apiKey },
        body: JSON.stringify({ filename: 'off.txt', content_type: 'text/plain', size: 1 }),
      });
      expect(presign.status).toBe(401);
      expect(await presign.text()).toContain('this agent takes no API keys');
    } finally {
      await env.stack.admin('agent', 'auth', '--agent', env.agentId, '--api-keys', 'on');
    }
    expect((await until((status) => status === 200)).status).toBe(200);
  });
});

/** The webhook REST endpoints (apps/gateway/src/webhooks/README.md): the agent's API key only, else 401. */
function webhookEndpoints(
  base: string,
  headers: (credential: string | undefined) => Record<string, string>,
): Endpoint[] {
  const json = { 'content-type': 'application/json' };
  const send = (path: string, method: string, body?: unknown) => (credential: string | undefined) =>
    fetch(`${base}${path}`, {
      method,
      headers: { ...json, ...headers(credential) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const refusal = { status: 401 };
  return [
    {
      name: 'webhooks REST: POST (register)',
      refusal,
      send: send('', 'POST', { url: 'http://127.0.0.1:9/acl', events: ['tool_call.completed'] }),
    },
    { name: 'webhooks REST: GET (list)', refusal, send: send('', 'GET') },
    { name: 'webhooks REST: DELETE', refusal, send: send('/wh_any', 'DELETE') },
    { name: 'webhooks REST: POST rotate-secret', refusal, send: send('/wh_any/rotate-secret', 'POST') },
    { name: 'webhooks REST: POST enable', refusal, send: send('/wh_any/enable', 'POST') },
    { name: 'webhooks REST: GET deliveries', refusal, send: send('/wh_any/deliveries', 'GET') },
    { name: 'webhooks REST: POST redeliver', refusal, send: send('/deliveries/msg_any/redeliver', 'POST') },
  ];
}

/** The JSON-RPC error code of a JSON body, or of the last `data:` line of an event stream. */
function codeOf(text: string): number | undefined {
  const json = text.trimStart().startsWith('{')
    ? text
    : text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .pop()
        ?.slice(5);
  try {
    return (JSON.parse(json ?? '') as { error?: { code?: number } }).error?.code;
  } catch {
    return undefined;
  }
}
