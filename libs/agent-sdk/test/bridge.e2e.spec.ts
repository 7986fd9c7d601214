import {
  connectMcp,
  startBridgeProcess,
  startTestStack,
  workspaceRoot,
  type McpConnection,
  type TestStack,
} from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ResourceUpdatedNotificationSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const AGENT = 'everything';
const root = workspaceRoot();
const EVERYTHING = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/**
 * `@modelcontextprotocol/server-everything` (stdio) behind the bridge, as the
 * README runs it (`npm run bridge -- --agent everything -- <server>`), called
 * through the gateway by the official SDK client.
 */
describe('the bridge: an MCP server (stdio) as a bus agent', () => {
  let env: TestStack;
  let bridge: ChildProcess;
  let mcp: McpConnection;

  beforeAll(async () => {
    env = await startTestStack({ pods: 0, podEnv: { AGENT_ID: AGENT } });
    bridge = await startBridgeProcess(env, AGENT, [process.execPath, EVERYTHING, 'stdio']);
    mcp = await connectMcp(env.mcpUrl(0, AGENT), env.apiKey);
  }, 180_000);

  afterAll(async () => {
    await mcp?.close();
    if (bridge?.exitCode === null) process.kill(-bridge.pid!, 'SIGTERM');
    await env?.stop();
  });

  /** A client that answers the server's questions, as an MCP application would. */
  const askingClient = async () => {
    const client = new Client(
      { name: 'bridge-asked', version: '1.0.0' },
      { capabilities: { sampling: {}, elicitation: {} } },
    );
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled by the test' },
      model: 'test-model',
      stopReason: 'endTurn',
    }));
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: {
        name: 'Ada',
        check: true,
        firstLine: 'x',
        email: 'ada@example.com',
        homepage: 'https://example.com',
        birthdate: '1815-12-10',
        integer: 1,
        number: 2,
        enum: 'a',
      },
    }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl(0, AGENT)), {
        requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
      }),
    );
    return client;
  };

  it("lists the server's tools with their schemas", async () => {
    const { tools } = await mcp.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']));
    expect(tools.find((t) => t.name === 'get-sum')!.inputSchema).toMatchObject({
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
    expect(tools.find((t) => t.name === 'echo')!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('calls echo and get-sum on the server', async () => {
    const echoed = await mcp.client.callTool({ name: 'echo', arguments: { message: 'through the bus' } });
    expect(JSON.stringify(echoed.content)).toContain('through the bus');
    const sum = await mcp.client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } });
    expect(JSON.stringify(sum.content)).toContain('42');
  });

  it("relays a long-running tool's progress, in order", async () => {
    const progress: Progress[] = [];
    await mcp.client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 1, steps: 4 } },
      undefined,
      {
        onprogress: (p) => progress.push(p),
      },
    );
    // In order, each once. The last may race the result on a loaded machine (CI once saw 1, 2, 3:
    // the gateway wrote the result before the step-4 event), so it is not required.
    const steps = progress.map((p) => p.progress);
    expect(steps.length).toBeGreaterThanOrEqual(3);
    expect(steps).toEqual([1, 2, 3, 4].slice(0, steps.length));
    expect(progress.every((p) => p.total === 4)).toBe(true);
  });

  it("carries the server's sampling and elicitation requests to the MCP client and back", async () => {
    const client = await askingClient();
    try {
      const sampled = await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'hi' } });
      expect(JSON.stringify(sampled.content)).toContain('sampled by the test');
      const elicited = await client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      expect(JSON.stringify(elicited.content)).toMatch(/accept/i);
    } finally {
      await client.close();
    }
  });

  it("reads the server's resources and prompts", async () => {
    const { resources } = await mcp.client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const read = await mcp.client.readResource({ uri: resources[0].uri });
    expect(read.contents[0]).toMatchObject({ uri: resources[0].uri });
    const { prompts } = await mcp.client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('simple-prompt');
    const prompt = await mcp.client.getPrompt({ name: 'simple-prompt' });
    expect(prompt.messages.length).toBeGreaterThan(0);
  });

  it("completes the server's prompt arguments and template variables (completion/complete)", async () => {
    const department = await mcp.client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'department', value: 'En' },
    });
    expect(department.completion.values).toEqual(['Engineering']);
    // The server's completer reads the arguments already chosen: they cross the bus too.
    const lead = await mcp.client.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Sales' } },
    });
    expect(lead.completion.values).toEqual(['David', 'Eve', 'Frank']);
    const { resourceTemplates } = await mcp.client.listResourceTemplates();
    const template = resourceTemplates.find((t) => t.uriTemplate.includes('{resourceId}'))!;
    const ids = await mcp.client.complete({
      ref: { type: 'ref/resource', uri: template.uriTemplate },
      argument: { name: 'resourceId', value: '1' },
    });
    expect(ids.completion.values).toEqual(['1']);
  });

  it("passes the server's resource updates to the clients subscribed to them", async () => {
    const client = new Client({ name: 'bridge-subscriber', version: '1.0.0' });
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl(0, AGENT)), {
        requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
      }),
    );
    const [watched, other] = (await client.listResources()).resources.map((r) => r.uri);
    try {
      await client.subscribeResource({ uri: watched });
      // The server sends an update for every resource its client (the bridge) subscribed to: now, then every 5 s.
      await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      const deadline = Date.now() + 10_000;
      while (!updates.includes(watched) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(updates).toContain(watched);
      await new Promise((r) => setTimeout(r, 300)); // the other resource's update, sent with it, is not passed on
      expect(updates).not.toContain(other);
    } finally {
      await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      await client.close();
    }
  });

  it('restarts a stdio server that dies mid-call: an idempotent call is run again on the new one, and the next call works', async () => {
    // The server process itself (the bridge's own command line names it too).
    const server = () =>
      execFileSync('pgrep', ['-f', `^${process.execPath} ${EVERYTHING} stdio`], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .filter(Boolean);
    const [before] = server();
    let killed = false;
    const progress: Progress[] = [];
    // trigger-long-running-operation is annotated idempotent: the bridge hands it back for another delivery.
    const result = await mcp.client.callTool(
      { name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 4 } },
      undefined,
      {
        onprogress: (p) => {
          progress.push(p);
          if (!killed && p.progress === 1) {
            killed = true;
            process.kill(Number(before), 'SIGKILL'); // the server is the bridge's child
          }
        },
      },
    );
    expect(killed).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(/completed/i);
    // The client sees progress only rise (the re-run's first steps repeat the lost run's); the last
    // step may race the result (see the progress test above).
    const steps = progress.map((p) => p.progress);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(progress.every((p) => p.total === 4)).toBe(true);
    const after = server();
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before);
    const sum = await mcp.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
    expect(JSON.stringify(sum.content)).toContain('3');
  });

  it('serves a Streamable HTTP server (--url) with the headers it is given (--header), and logs no header value', async () => {
    const token = 'remote-secret-token-5f1c';
    const remote = await startRemoteServer(token);
    await env.stack.admin('agent', 'create', '--id', 'remote', '--workspace', 'demo');
    const key = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', 'remote');
    // Without the header the server answers 401: the bridge could not list its tools, and would not serve.
    const http = await startBridgeProcess(env, 'remote', {
      url: remote.url,
      headers: [`Authorization: Bearer ${token}`],
    });
    const client = await connectMcp(env.mcpUrl(0, 'remote'), key.key);
    try {
      const { tools } = await client.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['whereami']);
      const answer = await client.client.callTool({ name: 'whereami', arguments: {} });
      expect(answer.content).toEqual([{ type: 'text', text: 'served over Streamable HTTP' }]);
      expect(remote.refused()).toBe(0);
      expect(http.output()).not.toContain(token);
    } finally {
      await client.close();
      process.kill(-http.pid!, 'SIGTERM');
      await remote.close();
    }
  });
});

/**
 * A Streamable HTTP MCP server of the official SDK (stateless: a server per
 * request) that answers only requests bearing `token`.
 */
async function startRemoteServer(token: string) {
  let refused = 0;
  const server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      refused++;
      res.writeHead(401).end();
      return;
    }
    const mcp = new McpServer({ name: 'remote', version: '1.0.0' });
    mcp.registerTool('whereami', { description: 'Says how it is served' }, async () => ({
      content: [{ type: 'text', text: 'served over Streamable HTTP' }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void mcp.close());
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    refused: () => refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
