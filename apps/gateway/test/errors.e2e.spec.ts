import { connectMcp, scrapeCounters, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { mintApiKey } from '@mcpgw/grants';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Codes a call can fail with, and every kind of bad input, on surface A. */
describe('errors and bad input on /{agent_id}/mcp', () => {
  let env: TestStack;
  let mcp: McpConnection;

  const post = (body: string, headers: Record<string, string> = {}, url = env.mcpUrl()) =>
    fetch(url, { method: 'POST', headers: { ...HEADERS, 'x-agent-api-key': env.apiKey, ...headers }, body });

  /** Nothing we answer may look like a stack trace. */
  const bodyOf = async (response: Response) => {
    const text = await response.text();
    expect(text).not.toMatch(/\n\s+at |\.ts:\d+|\.js:\d+/);
    return JSON.parse(text);
  };

  const callError = async (name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => {
    const error = await mcp.client.callTool({ name, arguments: args, _meta: meta }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    return error as McpError;
  };

  beforeAll(async () => {
    env = await startTestStack();
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  describe('tools/call', () => {
    it('an unknown tool is -32601', async () => {
      const error = await callError('no_such_tool', {});
      expect(error.code).toBe(-32601);
      expect(error.message).toContain('no_such_tool');
    });

    it('arguments failing the input schema are -32602, with the validator messages', async () => {
      const error = await callError('web_search', { query: 42 });
      expect(error.code).toBe(-32602);
      expect(error.data).toEqual({ errors: ['/query must be string'] });
      expect((await callError('web_search', {})).code).toBe(-32602);
      expect((await callError('web_search', { query: 'q', max_results: 2.5 })).code).toBe(-32602);
      expect((await callError('sleep', { ms: 10, extra: true })).code).toBe(-32602);
    });

    it('an agent that does not reply in time is -32003 "Agent reply timeout"', async () => {
      const started = Date.now();
      const error = await callError('sleep', { ms: 3_000 }, { 'mcpgw/timeoutMs': 400 });
      expect(error.code).toBe(-32003);
      expect(error.message).toContain('Agent reply timeout');
      expect(Date.now() - started).toBeLessThan(2_500);
    });

    it('params without a tool name are -32602', async () => {
      const response = await post(
        JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: {} } }),
      );
      expect(response.status).toBe(200);
      expect(await bodyOf(response)).toMatchObject({ id: 7, error: { code: -32602 } });
    });
  });

  describe('JSON-RPC framing', () => {
    it('malformed JSON is 400 -32700 with a null id', async () => {
      const response = await post('{"jsonrpc": "2.0", "id": 1, "method": ');
      expect(response.status).toBe(400);
      expect(await bodyOf(response)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: expect.stringContaining('Parse error') },
      });
    });

    it('a wrong jsonrpc version is -32600', async () => {
      const response = await post(JSON.stringify({ jsonrpc: '1.0', id: 3, method: 'ping' }));
      expect(response.status).toBe(400);
      expect(await bodyOf(response)).toMatchObject({ id: 3, error: { code: -32600 } });
    });

    it.each([
      ['a string body', '"hello"'],
      ['a method that is not a string', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 5 })],
      ['params that are an array', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: [1] })],
      ['an id that is an object', JSON.stringify({ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' })],
    ])('%s is -32600', async (_what, body) => {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect((await bodyOf(response)).error.code).toBe(-32600);
    });

    it('an unknown method is -32601', async () => {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 'abc', method: 'tools/destroy' }));
      expect(await bodyOf(response)).toMatchObject({ id: 'abc', error: { code: -32601 } });
    });

    it('a notification is accepted with 202 and no body', async () => {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      expect(response.status).toBe(202);
      expect(await response.text()).toBe('');
    });

    it('a body that is not JSON is refused by content type', async () => {
      const response = await post('hello', { 'content-type': 'text/plain' });
      expect(response.status).toBe(415);
      expect((await bodyOf(response)).error.code).toBe(-32600);
    });

    it('an unsupported MCP-Protocol-Version is 400', async () => {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), {
        'mcp-protocol-version': '1999-01-01',
      });
      expect(response.status).toBe(400);
    });
  });

  describe('API keys', () => {
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });

    it('a missing key is 401 with a JSON-RPC error body', async () => {
      const response = await fetch(env.mcpUrl(), { method: 'POST', headers: HEADERS, body: ping });
      expect(response.status).toBe(401);
      expect(await bodyOf(response)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001 } });
    });

    it('a wrong key is 401, and so is a well-formed key that was never issued', async () => {
      expect((await post(ping, { 'x-agent-api-key': 'not-a-key' })).status).toBe(401);
      const forged = `bak_${env.apiKeyId}_${'A'.repeat(43)}`;
      expect((await post(ping, { 'x-agent-api-key': forged })).status).toBe(401);
    });

    it('a flood of made-up keys is refused without reaching PostgreSQL, past a small lookup budget', async () => {
      const management = env.stack.managementUrlOf(env.gatewayUrls[0]);
      const before = (await scrapeCounters(management)).sqlStatements;
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 300 }, () => post(ping, { 'x-agent-api-key': mintApiKey().key })),
      );
      const seconds = Math.ceil((Date.now() - started) / 1000);
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 401));
      const statements = (await scrapeCounters(management)).sqlStatements - before;
      // 20 lookups a second for ids the index does not know, and a little background work.
      expect(statements).toBeLessThanOrEqual(20 * (seconds + 1) + 5);
      expect(statements).toBeLessThan(300);
    });

    it("agent A's key is refused on agent B, and B's on A", async () => {
      await env.stack.admin('agent', 'create', '--id', 'other-agent', '--workspace', 'demo');
      const agents = await env.stack.admin<{ id: string; tools: number }[]>('agent', 'list');
      expect(agents).toEqual([
        expect.objectContaining({ id: 'demo-agent', tools: expect.any(Number) }),
        expect.objectContaining({ id: 'other-agent', tools: 0 }),
      ]);
      expect(agents[0].tools).toBeGreaterThanOrEqual(8);
      const other = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', 'other-agent');
      const onOther = await post(ping, {}, env.mcpUrl(0, 'other-agent'));
      expect(onOther.status).toBe(401);
      // The same words as for a key that does not exist: a stolen key is not confirmed valid.
      const unknown = await post(ping, { 'x-agent-api-key': mintApiKey().key }, env.mcpUrl(0, 'other-agent'));
      expect((await bodyOf(onOther)).error.message).toBe((await bodyOf(unknown)).error.message);
      expect((await post(ping, { 'x-agent-api-key': other.key })).status).toBe(401);
      expect((await post(ping, { 'x-agent-api-key': other.key }, env.mcpUrl(0, 'other-agent'))).status).toBe(200);
    });

    it('the admin CLI refuses an unknown flag or a missing value instead of guessing', async () => {
      await expect(env.stack.admin('apikey', 'create', '--agent', env.agentId, '--lable', 'x')).rejects.toThrow(
        /Unknown option '--lable'/,
      );
      await expect(env.stack.admin('apikey', 'create', '--agent')).rejects.toThrow(/Option '--agent.*argument/);
    });

    it('a revoked key stops working at once, although the gateway cached it', async () => {
      const key = await env.stack.admin<{ id: string; key: string }>('apikey', 'create', '--agent', env.agentId);
      expect((await post(ping, { 'x-agent-api-key': key.key })).status).toBe(200);
      await env.stack.admin('apikey', 'revoke', key.id);
      const deadline = Date.now() + 2_000;
      let status = 200;
      while (status === 200 && Date.now() < deadline)
        status = (await post(ping, { 'x-agent-api-key': key.key })).status;
      expect(status).toBe(401);
    });
  });

  describe('sessions', () => {
    it('an unknown session id is 404', async () => {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), {
        'mcp-session-id': 'no-such-session',
      });
      expect(response.status).toBe(404);
    });

    it('DELETE ends a session; the ended session is 404 afterwards', async () => {
      const session = await connectMcp(env.mcpUrl(), env.apiKey);
      const id = session.sessionId!;
      await session.transport.terminateSession();
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), { 'mcp-session-id': id });
      expect(response.status).toBe(404);
      const again = await fetch(env.mcpUrl(), {
        method: 'DELETE',
        headers: { 'x-agent-api-key': env.apiKey, 'mcp-session-id': id },
      });
      expect(again.status).toBe(404);
    });

    it('a session presented with another key of the same agent is 404, not a credential', async () => {
      const second = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', env.agentId);
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), {
        'x-agent-api-key': second.key,
        'mcp-session-id': mcp.sessionId!,
      });
      expect(response.status).toBe(404);
    });

    it('GET without a session, or that does not accept an event stream, is 405', async () => {
      const noSession = await fetch(env.mcpUrl(), {
        headers: { accept: 'text/event-stream', 'x-agent-api-key': env.apiKey },
      });
      expect(noSession.status).toBe(405);
      const json = await fetch(env.mcpUrl(), {
        headers: { accept: 'application/json', 'x-agent-api-key': env.apiKey },
      });
      expect(json.status).toBe(405);
    });
  });

  describe('slow clients', () => {
    /** Send `head` and part of a body, then nothing: what does the server do, and when? */
    const dribble = (url: string, head: string, elapsed: () => number) =>
      new Promise<{ answer: string; afterMs: number }>((resolve, reject) => {
        const { hostname, port } = new URL(url);
        const socket = connect(Number(port), hostname, () => socket.write(head));
        let answer = '';
        socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
        socket.on('close', () => resolve({ answer, afterMs: elapsed() }));
        socket.on('error', reject);
        setTimeout(() => reject(new Error('the server kept the connection open')), 10_000).unref();
      });

    it('a body that never finishes is cut after HTTP_REQUEST_TIMEOUT_MS with 408', async () => {
      const url = (await env.stack.startGateway({ HTTP_REQUEST_TIMEOUT_MS: '1000' })).url;
      const started = Date.now();
      const head =
        `POST /${env.agentId}/mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n` +
        `Accept: application/json, text/event-stream\r\nX-Agent-API-Key: ${env.apiKey}\r\nContent-Length: 200\r\n\r\n{"jsonrpc":`;
      const { answer, afterMs } = await dribble(url, head, () => Date.now() - started);
      expect(answer).toMatch(/^HTTP\/1\.1 408/);
      expect(afterMs).toBeGreaterThanOrEqual(900);
      expect(afterMs).toBeLessThan(5_000);
    });
  });

  describe('when the message service is down', () => {
    it('a call is -32603 Internal error, and the gateway keeps serving', async () => {
      const ms = env.stack.processes.find((p) => p.name.startsWith('message-service'))!;
      await ms.stop();
      const error = await callError('echo', { text: 'anyone?' });
      expect(error.code).toBe(-32603);
      await expect(mcp.client.ping()).resolves.toEqual({});
      await expect(mcp.client.listTools()).resolves.toBeTruthy();
    });
  });
});
