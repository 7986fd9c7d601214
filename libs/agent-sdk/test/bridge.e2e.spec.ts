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
import { CreateMessageRequestSchema, ElicitRequestSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { execFileSync, type ChildProcess } from 'node:child_process';
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
});
