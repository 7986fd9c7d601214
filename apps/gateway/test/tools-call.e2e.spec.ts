import { connectMcp, parsePrometheus, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Every skill of the mock agent, through gateway → NATS → message service → JetStream → pod. */
describe('tools through the whole path', () => {
  let env: TestStack;
  let mcp: McpConnection;

  beforeAll(async () => {
    env = await startTestStack();
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  it('initialize issues a session id and negotiates a protocol version', () => {
    expect(mcp.sessionId).toMatch(/^[\x21-\x7e]{16,}$/);
    expect(mcp.client.getServerVersion()?.name).toBe('mcp-agent-gateway');
    expect(mcp.client.getServerCapabilities()?.tools).toBeDefined();
  });

  it('ping answers', async () => {
    await expect(mcp.client.ping()).resolves.toEqual({});
  });

  it('lists every registered skill as a tool with its JSON Schema', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['counter', 'crm_lookup', 'echo', 'fail', 'recall', 'screenshot', 'sleep', 'web_search']),
    );
    expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length);
    const search = tools.find((t) => t.name === 'web_search')!;
    expect(search.description).toMatch(/search/i);
    expect(search.inputSchema.required).toEqual(['query']);
    expect(search.inputSchema.properties).toMatchObject({ max_results: { type: 'integer', default: 5 } });
    expect(search.outputSchema).toBeDefined();
    expect(search.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('web_search returns deterministic results, five by default', async () => {
    const first = await mcp.client.callTool({ name: 'web_search', arguments: { query: 'nats jetstream' } });
    const again = await mcp.client.callTool({ name: 'web_search', arguments: { query: 'nats jetstream' } });
    const results = (first.structuredContent as { results: { title: string }[] }).results;
    expect(results).toHaveLength(5);
    expect(results[0].title).toBe('Result 1 for nats jetstream');
    expect(again.content).toEqual(first.content);
    expect(first.isError).toBeFalsy();

    const three = await mcp.client.callTool({ name: 'web_search', arguments: { query: 'x', max_results: 3 } });
    expect((three.structuredContent as { results: unknown[] }).results).toHaveLength(3);
    // resource_link content passes through intact.
    expect((three.content as { type: string }[]).filter((c) => c.type === 'resource_link')).toEqual([
      { type: 'resource_link', uri: 'https://search.example/x/1', name: 'Result 1 for x', mimeType: 'text/html' },
      { type: 'resource_link', uri: 'https://search.example/x/2', name: 'Result 2 for x', mimeType: 'text/html' },
      { type: 'resource_link', uri: 'https://search.example/x/3', name: 'Result 3 for x', mimeType: 'text/html' },
    ]);
  });

  it('screenshot returns a real PNG as image content', async () => {
    const result = await mcp.client.callTool({ name: 'screenshot', arguments: {} });
    const [image] = result.content as { type: string; data: string; mimeType: string }[];
    expect(image.type).toBe('image');
    expect(image.mimeType).toBe('image/png');
    const png = Buffer.from(image.data, 'base64');
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.subarray(12, 16).toString('ascii')).toBe('IHDR');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([32, 32]);
  });

  it('echo returns its input', async () => {
    const result = await mcp.client.callTool({ name: 'echo', arguments: { text: 'héllo ✓' } });
    expect(result.content).toEqual([{ type: 'text', text: 'héllo ✓' }]);
    expect(result.structuredContent).toEqual({ text: 'héllo ✓' });
  });

  it('sleep answers after the time it was asked to wait', async () => {
    const started = Date.now();
    const result = await mcp.client.callTool({ name: 'sleep', arguments: { ms: 300 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(result.content).toEqual([{ type: 'text', text: 'slept 300 ms' }]);
  });

  it('fail comes back as a tool error (isError), not a protocol error', async () => {
    const result = await mcp.client.callTool({ name: 'fail', arguments: { reason: 'disk full' } });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'fail: disk full' }]);
  });

  it('counter counts the executions the agent really ran', async () => {
    const key = `k-${Date.now()}`;
    const counts = [];
    for (let i = 0; i < 3; i++) {
      const result = await mcp.client.callTool({ name: 'counter', arguments: { key } });
      counts.push((result.structuredContent as { count: number }).count);
    }
    expect(counts).toEqual([1, 2, 3]);
  });

  it('recall sees the earlier turns of the same session, in order', async () => {
    const session = await connectMcp(env.mcpUrl(), env.apiKey);
    try {
      await session.client.callTool({ name: 'echo', arguments: { text: 'first turn' } });
      await session.client.callTool({ name: 'web_search', arguments: { query: 'second turn', max_results: 1 } });
      const recalled = await session.client.callTool({ name: 'recall', arguments: {} });
      const { turns } = recalled.structuredContent as { turns: { tool: string; arguments: unknown; reply: string }[] };
      expect(turns.map((t) => t.tool)).toEqual(['echo', 'web_search']);
      expect(turns[0]).toMatchObject({ arguments: { text: 'first turn' }, reply: 'first turn' });
      expect(turns[1].arguments).toEqual({ query: 'second turn', max_results: 1 });
    } finally {
      await session.close();
    }
  });

  it('another session starts with an empty conversation', async () => {
    const other = await connectMcp(env.mcpUrl(), env.apiKey);
    try {
      const recalled = await other.client.callTool({ name: 'recall', arguments: {} });
      expect((recalled.structuredContent as { turns: unknown[] }).turns).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('without a session, every call gets a new channel', async () => {
    const call = (name: string, args: object) =>
      fetch(env.mcpUrl(), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': env.apiKey,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
      }).then((r) => r.json());
    await call('echo', { text: 'nobody remembers this' });
    const recalled = await call('recall', {});
    expect(recalled.result.structuredContent.turns).toEqual([]);
  });

  it('counts calls by agent and tool; a made-up tool name is counted as (unknown), not as itself', async () => {
    const metricsUrl = `${env.stack.managementUrlOf(env.gatewayUrls[0])}/metrics`;
    const count = async (labels: Record<string, string>) =>
      parsePrometheus(await (await fetch(metricsUrl)).text())
        .filter((s) => s.name === 'mcpgw_tool_calls_total')
        .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        .reduce((sum, s) => sum + s.value, 0);
    const echoes = await count({ agent: env.agentId, tool: 'echo', outcome: 'ok' });
    await mcp.client.callTool({ name: 'echo', arguments: { text: 'counted' } });
    expect(await count({ agent: env.agentId, tool: 'echo', outcome: 'ok' })).toBe(echoes + 1);
    await mcp.client.callTool({ name: 'made_up_tool_7f3a', arguments: {} }).catch(() => undefined);
    expect(await count({ tool: 'made_up_tool_7f3a' })).toBe(0);
    expect(await count({ agent: env.agentId, tool: '(unknown)', outcome: 'tool_not_found' })).toBeGreaterThanOrEqual(1);
  });

  it('every service serves Prometheus metrics on its management port; the gateway counts and times tools/call', async () => {
    const gateway = await (await fetch(`${env.stack.managementUrlOf(env.gatewayUrls[0])}/metrics`)).text();
    expect(gateway).toMatch(/mcpgw_tool_calls_total\{[^}]*surface="agent"[^}]*outcome="ok"[^}]*\} [1-9]/);
    expect(gateway).toMatch(/mcpgw_tool_calls_total\{[^}]*outcome="tool_error"[^}]*\} [1-9]/);
    expect(gateway).toContain('mcpgw_tool_call_seconds_bucket');
    for (const proc of env.stack.processes.filter((p) => p.running)) {
      const text = await (await fetch(`${proc.managementUrl}/metrics`)).text();
      expect(text).toContain('process_cpu_seconds_total');
    }
  });

  it('the public and internal ports serve no probes or metrics; the management port serves all three', async () => {
    const publicPorts = env.stack.processes.filter((p) => p.running && p.url).map((p) => p.url!);
    expect(publicPorts.length).toBeGreaterThanOrEqual(2);
    for (const url of publicPorts) {
      for (const path of ['/metrics', '/ready', '/health'])
        expect((await fetch(`${url}${path}`)).status, `${url}${path}`).toBe(404);
    }
    for (const proc of env.stack.processes.filter((p) => p.running)) {
      for (const path of ['/metrics', '/ready', '/health'])
        expect((await fetch(`${proc.managementUrl}${path}`)).status).toBe(200);
    }
  });
});
