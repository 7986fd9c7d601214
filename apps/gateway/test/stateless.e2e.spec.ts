import { startTestStack, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const VERSION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'stateless-test', version: '1.0.0' },
};
type Turns = { turns: { arguments: { text?: string } }[] };

/** MCP 2026-07-28 on /{agent_id}/mcp: no handshake, no session, `_meta` on every request. */
describe('the stateless revision (2026-07-28)', () => {
  let env: TestStack;

  const post = async (
    method: string,
    params: Record<string, unknown> = {},
    headers: Record<string, string> = {},
    key?: string,
  ) => {
    const response = await fetch(env.mcpUrl(), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'x-agent-api-key': key ?? env.apiKey,
        'mcp-protocol-version': VERSION,
        'mcp-method': method,
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { _meta: META, ...params } }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: text.startsWith('{') ? JSON.parse(text) : undefined,
    };
  };
  const call = (name: string, args: Record<string, unknown>, meta: Record<string, unknown> = {}) =>
    post('tools/call', { name, arguments: args, _meta: { ...META, ...meta } }, { 'mcp-name': name });

  beforeAll(async () => {
    env = await startTestStack({
      gatewayEnv: { CONVERSATION_HANDLE_SECRET: 'a-test-secret-of-at-least-32-characters!' },
    });
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('server/discover tells versions, capabilities and identity, without a handshake', async () => {
    const answer = await post('server/discover');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('mcp-session-id')).toBeNull();
    expect(answer.body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: expect.arrayContaining([VERSION, '2025-11-25', '2025-06-18', '2025-03-26']),
      capabilities: { tools: {} },
      serverInfo: { name: 'mcp-agent-gateway' },
      ttlMs: expect.any(Number),
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'mcp-agent-gateway' } },
    });
  });

  it('tools/list and tools/call work on their own, and their results say resultType complete', async () => {
    const list = await post('tools/list');
    expect(list.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    expect(list.body.result.tools.map((t: { name: string }) => t.name)).toContain('echo');
    const echoed = await call('echo', { text: 'no session needed' });
    expect(echoed.body.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'no session needed' }],
    });
  });

  it('multi-turn through the conversation handle a result returns and the client sends back', async () => {
    const first = await call('echo', { text: 'turn one' });
    const handle = first.body.result._meta['mcpgw/conversation'];
    expect(typeof handle).toBe('string');
    const second = await call('echo', { text: 'turn two' }, { 'mcpgw/conversation': handle });
    expect(second.body.result._meta['mcpgw/conversation']).toBe(handle);
    const recalled = await call('recall', {}, { 'mcpgw/conversation': handle });
    expect((recalled.body.result.structuredContent as Turns).turns.map((t) => t.arguments.text)).toEqual([
      'turn one',
      'turn two',
    ]);

    const fresh = await call('recall', {});
    expect((fresh.body.result.structuredContent as Turns).turns).toEqual([]);
  });

  it('refuses a forged handle, and one of another API key', async () => {
    const first = await call('echo', { text: 'mine' });
    const handle: string = first.body.result._meta['mcpgw/conversation'];
    const forged = `${handle.split('.')[0]}.${'A'.repeat(43)}`;
    expect((await call('recall', {}, { 'mcpgw/conversation': forged })).body.error.code).toBe(-32602);
    const other = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', env.agentId);
    const stolen = await post(
      'tools/call',
      { name: 'recall', arguments: {}, _meta: { ...META, 'mcpgw/conversation': handle } },
      { 'mcp-name': 'recall' },
      other.key,
    );
    expect(stolen.body.error.code).toBe(-32602);
  });

  it('streams progress on the request itself, then the result', async () => {
    const answer = await call('sleep', { ms: 400, progress_every_ms: 100 }, { progressToken: 'p1' });
    expect(answer.headers.get('content-type')).toContain('text/event-stream');
    const messages = answer.text
      .split('\n\n')
      .map((event) =>
        event
          .split('\n')
          .find((line) => line.startsWith('data: '))
          ?.slice(6),
      )
      .filter((data): data is string => !!data)
      .map((data) => JSON.parse(data));
    const progress = messages.filter((m) => m.method === 'notifications/progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0].params).toMatchObject({ progressToken: 'p1', total: 400 });
    expect(messages.at(-1).result).toMatchObject({ resultType: 'complete', content: [{ text: 'slept 400 ms' }] });
  });

  it.each([
    [
      'no clientCapabilities in _meta',
      { _meta: { 'io.modelcontextprotocol/protocolVersion': VERSION } },
      {},
      400,
      -32602,
    ],
    [
      'an unsupported version in _meta',
      { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } },
      { 'mcp-protocol-version': '2030-01-01' },
      400,
      -32022,
    ],
    ['a version header that disagrees with _meta', {}, { 'mcp-protocol-version': '2025-11-25' }, 400, -32020],
    ['an Mcp-Method header that disagrees with the body', {}, { 'mcp-method': 'tools/call' }, 400, -32020],
    ['no MCP-Protocol-Version header', {}, { 'mcp-protocol-version': '' }, 400, -32020],
    ['no Mcp-Method header', {}, { 'mcp-method': '' }, 400, -32020],
  ])('%s is refused', async (_what, params, headers, status, code) => {
    const answer = await post('tools/list', params, headers);
    expect(answer.status).toBe(status);
    expect(answer.body.error.code).toBe(code);
  });

  it('says which versions it supports when the requested one is not', async () => {
    const answer = await post(
      'tools/list',
      { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } },
      { 'mcp-protocol-version': '2030-01-01' },
    );
    expect(answer.body.error.data).toEqual({
      supported: [VERSION, '2025-11-25', '2025-06-18', '2025-03-26'],
      requested: '2030-01-01',
    });
  });

  it('tools/call needs Mcp-Name to name the tool, plain or base64-encoded', async () => {
    const params = { name: 'echo', arguments: { text: 'named' } };
    expect((await post('tools/call', params, { 'mcp-name': 'recall' })).body.error.code).toBe(-32020);
    expect((await post('tools/call', params, { 'mcp-name': '' })).body.error.code).toBe(-32020);
    const encoded = `=?base64?${Buffer.from('echo').toString('base64')}?=`;
    expect((await post('tools/call', params, { 'mcp-name': encoded })).body.result.content[0].text).toBe('named');
  });

  it('an unknown tool is a JSON-RPC error with HTTP 200 (only unknown methods are 404)', async () => {
    const answer = await post('tools/call', { name: 'no_such_tool', arguments: {} }, { 'mcp-name': 'no_such_tool' });
    expect(answer.status).toBe(200);
    expect(answer.body.error.code).toBe(-32601);
  });

  it.each(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'no/such/method'])(
    '%s is an unknown method: 404 -32601',
    async (method) => {
      const answer = await post(method);
      expect(answer.status).toBe(404);
      expect(answer.body.error.code).toBe(-32601);
    },
  );
});
