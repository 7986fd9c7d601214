import { startBridgeProcess, startTestStack, workspaceRoot, type BridgeProcess, type TestStack } from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askingServer } from './fixtures/asking-server.mjs';

const STDIO = 'asking';
const HTTP = 'asking-http';
const SERVER = join(workspaceRoot(), 'libs/agent-sdk/test/fixtures/asking-server.mjs');
const SECRET = 'bridge-secret-7d41';
const NAMED = 'named-for-the-server-2b9e';

/**
 * Whose question it is: a server behind the bridge (fixtures/asking-server.mjs)
 * asks its client (elicitation/create) during caller A's call while caller B's
 * call, started after A's, runs too. Over Streamable HTTP the question reaches
 * A (it arrives under A's request); over stdio nothing says whose it is, so it
 * is refused rather than asked of B. And the stdio server's environment holds
 * only what `--env` names, not the bridge's own.
 */
describe('the bridge: a server asks the client of the call it is for, or no one', () => {
  let env: TestStack;
  let markers: string;
  let keyB: string;
  let remote: Awaited<ReturnType<typeof startAskingHttpServer>>;
  const bridges: BridgeProcess[] = [];

  beforeAll(async () => {
    markers = mkdtempSync(join(tmpdir(), 'mcpgw-bridge-questions-'));
    env = await startTestStack({ pods: 0, podEnv: { AGENT_ID: STDIO } });
    keyB = (await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', STDIO)).key;
    bridges.push(
      await startBridgeProcess(
        env,
        STDIO,
        { command: [process.execPath, SERVER], env: ['MARKERS', 'BRIDGE_NAMED_TEST'] },
        { MARKERS: markers, BRIDGE_SECRET_TEST: SECRET, BRIDGE_NAMED_TEST: NAMED },
      ),
    );
    remote = await startAskingHttpServer();
    await env.stack.admin('agent', 'create', '--id', HTTP, '--workspace', 'demo');
    bridges.push(await startBridgeProcess(env, HTTP, { url: remote.url }));
  }, 180_000);

  afterAll(async () => {
    for (const bridge of bridges) if (bridge.exitCode === null) process.kill(-bridge.pid!, 'SIGTERM');
    await remote?.close();
    await env?.stop();
    rmSync(markers, { recursive: true, force: true });
  });

  /** A caller of the agent with a key of its own, answering questions as itself and noting each. */
  const caller = async (agent: string, key: string, name: string) => {
    const asked: string[] = [];
    const client = new Client({ name: `caller-${name}`, version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { answer: `from ${name}` } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl(0, agent)), {
        requestInit: { headers: { 'X-Agent-API-Key': key } },
      }),
    );
    return { client, asked };
  };
  const keyOf = async (agent: string) =>
    (await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', agent)).key;
  const text = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

  it("Streamable HTTP: the question of A's call reaches A, never B (whose call started after A's)", async () => {
    const a = await caller(HTTP, await keyOf(HTTP), 'A');
    const b = await caller(HTTP, await keyOf(HTTP), 'B');
    try {
      const confirm = a.client.callTool({ name: 'confirm', arguments: { who: 'A', after_hold: true } });
      await expect.poll(() => remote.started.has('confirm-A'), { timeout: 10_000 }).toBe(true);
      // B's call starts after A's, and the server asks only while both run.
      const hold = b.client.callTool({ name: 'hold', arguments: { for: 'A' } });
      expect(text(await confirm)).toBe('answered accept {"answer":"from A"}');
      expect(text(await hold)).toBe('held');
      expect(a.asked).toEqual(['Confirm for A?']);
      expect(b.asked).toEqual([]);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it('stdio: the only call running is asked', async () => {
    const a = await caller(STDIO, env.apiKey, 'A');
    try {
      const confirm = await a.client.callTool({ name: 'confirm', arguments: { who: 'solo' } });
      expect(text(confirm)).toBe('answered accept {"answer":"from A"}');
      expect(a.asked).toEqual(['Confirm for solo?']);
    } finally {
      await a.client.close();
    }
  });

  it('stdio: with two calls running, a question (which says not whose it is) is refused to the server, never asked of B', async () => {
    const a = await caller(STDIO, env.apiKey, 'A');
    const b = await caller(STDIO, keyB, 'B');
    try {
      const confirm = a.client.callTool({ name: 'confirm', arguments: { who: 'A', after_hold: true } });
      await expect.poll(() => existsSync(join(markers, 'started-confirm-A')), { timeout: 10_000 }).toBe(true);
      const hold = b.client.callTool({ name: 'hold', arguments: { for: 'A' } });
      expect(text(await confirm)).toMatch(
        /^refused: .*elicitation\/create: 2 calls are running and the request is related to none of them/,
      );
      expect(text(await hold)).toBe('held');
      expect(a.asked).toEqual([]);
      expect(b.asked).toEqual([]);
    } finally {
      await a.client.close();
      await b.client.close();
    }
  });

  it("stdio: the server's environment holds what --env names, not the bridge's own (its secrets, its NATS credentials)", async () => {
    const a = await caller(STDIO, env.apiKey, 'A');
    const valueOf = async (name: string) => text(await a.client.callTool({ name: 'env', arguments: { name } }));
    try {
      expect(await valueOf('BRIDGE_NAMED_TEST')).toBe(NAMED);
      expect(await valueOf('BRIDGE_SECRET_TEST')).toBe('(unset)');
      expect(await valueOf('NATS_CREDS')).toBe('(unset)');
      expect(await valueOf('PATH')).not.toBe('(unset)'); // the SDK's safe default
    } finally {
      await a.client.close();
    }
  });
});

/**
 * The fixture's server over Streamable HTTP, with sessions (the server's
 * requests need one: the answer comes back on another POST), as an official
 * SDK server serves it; `started` holds the calls begun.
 */
async function startAskingHttpServer() {
  const started = new Set<string>();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server = createServer((req, res) => {
    const id = req.headers['mcp-session-id'];
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return void known.handleRequest(req, res);
    if (id !== undefined) return void res.writeHead(404).end();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (session) => void sessions.set(session, transport),
    });
    void askingServer({ started: (call: string) => started.add(call) })
      .connect(transport)
      .then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    started,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
