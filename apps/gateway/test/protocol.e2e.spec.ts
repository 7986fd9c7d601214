import {
  agentInboxState,
  connectMcp,
  inboxMessageId,
  startTestStack,
  type McpConnection,
  type TestStack,
} from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import type { NatsConnection } from 'nats';
import { request as httpRequest } from 'node:http';
import { Client as PgClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const JSON_AND_SSE = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** MCP protocol features through the whole path, with the official SDK client where it can speak them. */
describe('MCP protocol fidelity on /{agent_id}/mcp', () => {
  let env: TestStack;
  let mcp: McpConnection;
  let db: PgClient;
  let nc: NatsConnection;
  const inbox = () => agentInboxState(nc, env.stack.settings.busPrefix, env.agentId);

  const raw = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(env.mcpUrl(), {
      method: 'POST',
      headers: { ...JSON_AND_SSE, 'x-agent-api-key': env.apiKey, ...headers },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    env = await startTestStack({ podEnv: { LOG_LEVEL: 'debug' } });
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    db = new PgClient({ connectionString: env.stack.settings.databaseUrl });
    await db.connect();
    nc = await env.connectNats();
  });

  afterAll(async () => {
    await nc?.close();
    await db?.end();
    await mcp?.close();
    await env?.stop();
  });

  describe('handshake of each revision', () => {
    it.each(['2025-03-26', '2025-06-18', '2025-11-25'])(
      'initialize for %s answers in that revision',
      async (version) => {
        const response = await raw({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        });
        expect(response.status).toBe(200);
        expect(response.headers.get('mcp-session-id')).toMatch(/^[\x21-\x7e]+$/);
        const body = await response.json();
        expect(body.result).toMatchObject({ protocolVersion: version, serverInfo: { name: 'mcp-agent-gateway' } });
        expect(body.result.capabilities).toMatchObject({ tools: { listChanged: true }, logging: {}, completions: {} });
      },
    );

    it('an unknown revision gets the newest one', async () => {
      const body = await (
        await raw({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2024-01-01', capabilities: {} },
        })
      ).json();
      expect(body.result.protocolVersion).toBe('2025-11-25');
    });

    it('the official SDK client negotiates 2025-11-25', () => {
      expect(mcp.transport.protocolVersion).toBe('2025-11-25');
    });

    it.each(['2025-03-26', '2025-06-18'])(
      'the official SDK client works in %s, asked for by its initialize',
      async (version) => {
        // The SDK always asks for its newest revision; this fetch asks for an older one instead.
        const older: typeof fetch = (input, init) => {
          const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
          if (body?.method === 'initialize') body.params.protocolVersion = version;
          return fetch(input, body ? { ...init, body: JSON.stringify(body) } : init);
        };
        const client = new Client({ name: 'older-client', version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(new URL(env.mcpUrl()), {
          fetch: older,
          requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
        });
        await client.connect(transport);
        expect(transport.protocolVersion).toBe(version);
        const result = await client.callTool({ name: 'echo', arguments: { text: version } });
        expect(result.content).toEqual([{ type: 'text', text: version }]);
        await client.close();
      },
    );
  });

  describe('streaming', () => {
    it('progress notifications arrive, increasing, before the result', async () => {
      const seen: Progress[] = [];
      let resultAt = 0;
      const result = await mcp.client
        .callTool({ name: 'sleep', arguments: { ms: 600, progress_every_ms: 100 } }, undefined, {
          onprogress: (progress) => seen.push(progress),
        })
        .then((r) => ((resultAt = seen.length), r));
      expect(result.content).toEqual([{ type: 'text', text: 'slept 600 ms' }]);
      expect(seen.length).toBeGreaterThanOrEqual(3);
      expect(resultAt).toBe(seen.length);
      for (let i = 1; i < seen.length; i++) expect(seen[i].progress).toBeGreaterThan(seen[i - 1].progress);
      expect(seen.at(-1)).toMatchObject({ total: 600 });
    });

    it('a slow agent that keeps reporting progress is not cut by the reply timeout', async () => {
      const result = await mcp.client.callTool(
        { name: 'sleep', arguments: { ms: 1_500, progress_every_ms: 100 }, _meta: { 'mcpgw/timeoutMs': 400 } },
        undefined,
        { onprogress: () => undefined, timeout: 10_000 },
      );
      expect(result.content).toEqual([{ type: 'text', text: 'slept 1500 ms' }]);
    });

    it('the same slow agent without progress is cut by it (-32003)', async () => {
      const error = await mcp.client
        .callTool({ name: 'sleep', arguments: { ms: 1_500 }, _meta: { 'mcpgw/timeoutMs': 400 } }, undefined, {
          onprogress: () => undefined,
        })
        .catch((e: { code?: number }) => e);
      expect(error).toMatchObject({ code: -32003 });
    });

    it('after logging/setLevel, agent log lines arrive as notifications/message at or above the level', async () => {
      const session = await connectMcp(env.mcpUrl(), env.apiKey);
      const lines: unknown[] = [];
      session.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void lines.push(n.params));
      await session.client.setLoggingLevel('info');
      await session.client.callTool({ name: 'sleep', arguments: { ms: 300, progress_every_ms: 100 } });
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(lines[0]).toMatchObject({ level: 'info', logger: 'sleep', data: { of_ms: 300 } });
      await session.client.setLoggingLevel('error');
      lines.length = 0;
      await session.client.callTool({ name: 'sleep', arguments: { ms: 200, progress_every_ms: 100 } });
      expect(lines).toEqual([]);
      await session.close();
    });
  });

  describe('requests from the agent to the client', () => {
    it('relays sampling and elicitation from the agent to the client and the answers back, through the bus', async () => {
      const client = new Client(
        { name: 'answering-client', version: '1.0.0' },
        { capabilities: { sampling: {}, elicitation: {} } },
      );
      client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
        role: 'assistant',
        content: { type: 'text', text: `sampled: ${(request.params.messages[0].content as { text: string }).text}` },
        model: 'test-model',
      }));
      client.setRequestHandler(ElicitRequestSchema, async () => ({
        action: 'accept',
        content: { username: 'ada', email: 'ada@example.com' },
      }));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(env.mcpUrl()), {
          requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
        }),
      );
      const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
      expect(sampled.content).toEqual([{ type: 'text', text: 'LLM response: sampled: hello' }]);
      const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'who are you?' } });
      expect((elicited.content as { text: string }[])[0].text).toBe(
        'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
      );
      await client.close();
    });
  });

  it("an answer to an agent's question from another session is dropped; only the asked session answers", async () => {
    // Session B: same agent, same key, its own session. It learns A's question id and answers first.
    const intruder = await connectMcp(env.mcpUrl(), env.apiKey);
    const intruderSession = intruder.transport.sessionId!;
    const answerAs = (sessionId: string, id: string | number, username: string) =>
      fetch(env.mcpUrl(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': env.apiKey,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          result: { action: 'accept', content: { username, email: 'x@example.com' } },
        }),
      });
    const asked = new Client({ name: 'asked-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let intruderStatus = 0;
    asked.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
      intruderStatus = (await answerAs(intruderSession, extra.requestId, 'mallory')).status;
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    });
    await asked.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl()), {
        requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
      }),
    );
    const elicited = await asked.callTool({ name: 'test_elicitation', arguments: { message: 'who are you?' } });
    expect(intruderStatus).toBe(202);
    expect((elicited.content as { text: string }[])[0].text).toContain('"username":"ada"');
    await asked.close();
    await intruder.close();
  });

  describe('cancellation', () => {
    it('cancelling a tools/call stops the agent: the skill is aborted and no reply is stored', async () => {
      const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
      const before = (await inbox()).delivered;
      const controller = new AbortController();
      const call = mcp.client
        .callTool({ name: 'sleep', arguments: { ms: 5_000 } }, undefined, { signal: controller.signal })
        .catch((e: Error) => e);
      // The pod holds the message (JetStream handed it over; the skill runs): the only call in flight.
      await expect.poll(async () => (await inbox()).delivered, { timeout: 5_000 }).toBeGreaterThan(before);
      const seq = (await inbox()).delivered;
      const started = { message_id: await inboxMessageId(nc, env.stack.settings.busPrefix, seq) };
      controller.abort('changed my mind');
      expect(await call).toBeInstanceOf(Error);
      // Acknowledged long before the 5 s sleep could end, and with no reply: the skill was cancelled.
      await expect.poll(async () => (await inbox()).ackFloor, { timeout: 3_000 }).toBeGreaterThanOrEqual(seq);
      const replies = await db.query(`SELECT 1 FROM messaging.messages WHERE in_reply_to = $1`, [started.message_id]);
      expect(replies.rowCount).toBe(0);
      expect(pod.logs.some((l) => l.msg === 'skill answered' && l.message_id === started.message_id)).toBe(false);
    });
  });

  describe('other methods', () => {
    it("lists the agent's resources, templates and prompts, and reads and renders them through the agent", async () => {
      expect((await mcp.client.listResources()).resources.map((r) => r.uri)).toContain('test://static-text');
      expect((await mcp.client.listResourceTemplates()).resourceTemplates[0]).toMatchObject({
        uriTemplate: 'test://template/{id}/data',
      });
      expect((await mcp.client.listPrompts()).prompts.map((p) => p.name)).toContain('test_prompt_with_arguments');
      const read = await mcp.client.readResource({ uri: 'test://template/42/data' });
      expect(JSON.parse(String(read.contents[0].text))).toMatchObject({ id: '42', templateTest: true });
      const prompt = await mcp.client.getPrompt({
        name: 'test_prompt_with_arguments',
        arguments: { arg1: 'a', arg2: 'b' },
      });
      expect(prompt.messages[0].content).toEqual({ type: 'text', text: "Prompt with arguments: arg1='a', arg2='b'" });
    });

    it('an unknown resource is -32002, an unknown prompt or a missing argument -32602', async () => {
      expect(await mcp.client.readResource({ uri: 'test://nope' }).catch((e: { code?: number }) => e)).toMatchObject({
        code: -32002,
      });
      expect(await mcp.client.getPrompt({ name: 'nope' }).catch((e: { code?: number }) => e)).toMatchObject({
        code: -32602,
      });
      expect(
        await mcp.client
          .getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a' } })
          .catch((e: { code?: number }) => e),
      ).toMatchObject({ code: -32602 });
    });

    it('completion/complete: no values for an agent that does not complete, -32602 for what it does not offer', async () => {
      // The mock pod registers no `completions`: the gateway answers without asking it.
      const answer = await mcp.client.complete({
        ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
        argument: { name: 'arg1', value: 'b' },
      });
      expect(answer.completion).toEqual({ values: [], total: 0, hasMore: false });
      const unknown = (ref: { type: string; name?: string; uri?: string }) =>
        mcp.client
          .complete({ ref: ref as never, argument: { name: 'a', value: 'b' } })
          .catch((e: { code?: number }) => e);
      expect(await unknown({ type: 'ref/prompt', name: 'nope' })).toMatchObject({ code: -32602 });
      expect(await unknown({ type: 'ref/other', name: 'x' })).toMatchObject({ code: -32602 });
    });

    it('logging/setLevel refuses an unknown level with -32602', async () => {
      const error = await mcp.client.setLoggingLevel('loud' as never).catch((e: { code?: number }) => e);
      expect(error).toMatchObject({ code: -32602 });
    });

    it('tools/list pages with opaque cursors, and the pages add up to the whole list', async () => {
      const paged = await env.stack.startGateway({ MCP_PAGE_SIZE: '5' });
      const client = await connectMcp(`${paged.url}/${env.agentId}/mcp`, env.apiKey);
      const names: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.client.listTools(cursor ? { cursor } : {});
        expect(page.tools.length).toBeLessThanOrEqual(5);
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      const all = (await mcp.client.listTools()).tools.map((t) => t.name);
      expect(pages).toBe(Math.ceil(all.length / 5));
      expect(names).toEqual(all);
      await client.close();
    });

    it('tools/list refuses an invalid cursor with -32602', async () => {
      for (const cursor of ['not-a-cursor!', Buffer.from('o:x').toString('base64url'), 'AAAA']) {
        const error = await mcp.client.listTools({ cursor }).catch((e: { code?: number }) => e);
        expect(error).toMatchObject({ code: -32602 });
      }
    });

    it('tools carry title, annotations, outputSchema and _meta when the agent declares them', async () => {
      const { tools } = await mcp.client.listTools();
      const crm = tools.find((t) => t.name === 'crm_lookup')!;
      expect(crm).toMatchObject({
        title: 'CRM lookup',
        annotations: { readOnlyHint: true, openWorldHint: false },
        outputSchema: { type: 'object' },
        _meta: { 'mcpgw/source': 'mock-crm' },
      });
    });
  });

  describe('DNS-rebinding protection', () => {
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

    it('refuses a browser Origin that is not allowed with 403, and lets local ones in', async () => {
      const evil = await raw(ping, { origin: 'http://evil.example' });
      expect(evil.status).toBe(403);
      expect((await evil.json()).error.message).toContain('evil.example');
      expect((await raw(ping, { origin: 'http://localhost:5173' })).status).toBe(200);
    });

    it('refuses a Host that is not allowed with 403, when allowed hosts are set', async () => {
      const strict = await env.stack.startGateway({ MCP_ALLOWED_HOSTS: 'mcp.example.com' });
      const target = new URL(`${strict.url}/${env.agentId}/mcp`);
      const send = (host?: string) =>
        new Promise<number>((resolve, reject) => {
          const req = httpRequest(
            target,
            { method: 'POST', headers: { ...JSON_AND_SSE, 'x-agent-api-key': env.apiKey, ...(host ? { host } : {}) } },
            (res) => (res.resume(), resolve(res.statusCode!)),
          );
          req.on('error', reject);
          req.end(JSON.stringify(ping));
        });
      expect(await send()).toBe(403);
      expect(await send('mcp.example.com')).toBe(200);
    });
  });

  describe('2025-03-26 batches', () => {
    it('answers every request of a batch in one array, and nothing for its notifications', async () => {
      const response = await raw(
        [
          { jsonrpc: '2.0', id: 'a', method: 'ping' },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'echo', arguments: { text: 'batched' } } },
          { jsonrpc: '2.0', id: 'c', method: 'no/such' },
        ],
        { 'mcp-protocol-version': '2025-03-26' },
      );
      expect(response.status).toBe(200);
      const answers = (await response.json()) as { id: string; result?: any; error?: any }[];
      expect(answers.map((a) => a.id).sort()).toEqual(['a', 'b', 'c']);
      expect(answers.find((a) => a.id === 'b')!.result.content).toEqual([{ type: 'text', text: 'batched' }]);
      expect(answers.find((a) => a.id === 'c')!.error.code).toBe(-32601);
    });

    it('a batch of notifications only is 202', async () => {
      const response = await raw([{ jsonrpc: '2.0', method: 'notifications/initialized' }], {
        'mcp-protocol-version': '2025-03-26',
      });
      expect(response.status).toBe(202);
    });

    it('later revisions refuse batches', async () => {
      const response = await raw([{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-protocol-version': '2025-06-18' });
      expect(response.status).toBe(400);
    });
  });

  describe('the GET stream', () => {
    it('carries notifications/tools/list_changed when the agent registers its skills again', async () => {
      const response = await fetch(env.mcpUrl(), {
        headers: { accept: 'text/event-stream', 'x-agent-api-key': env.apiKey, 'mcp-session-id': mcp.sessionId! },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      await env.stack.startPod({ POD_ID: 'pod-late' });
      const deadline = Date.now() + 5_000;
      while (!text.includes('notifications/tools/list_changed') && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      await reader.cancel();
      expect(text).toMatch(/^id: \S+\nretry: \d+\ndata: \n\n/); // the 2025-11-25 priming event
      expect(text).toContain('"method":"notifications/tools/list_changed"');
    });

    it.each(['2025-03-26', '2025-06-18'])('opens at once in %s, which has no priming event', async (version) => {
      const initialized = await raw(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'get-stream', version: '1' } },
        },
        { 'mcp-protocol-version': version },
      );
      const sessionId = initialized.headers.get('mcp-session-id')!;
      expect(sessionId).toBeTruthy();
      const opened = Date.now();
      // fetch resolves with the headers: before any event, not at the first keep-alive (25 s).
      const response = await fetch(env.mcpUrl(), {
        headers: {
          accept: 'text/event-stream',
          'x-agent-api-key': env.apiKey,
          'mcp-session-id': sessionId,
          'mcp-protocol-version': version,
        },
        signal: AbortSignal.timeout(5_000),
      });
      expect(response.status).toBe(200);
      expect(Date.now() - opened).toBeLessThan(2_000);
      await response.body!.cancel();
    });
  });
});
