import {
  connectMcp,
  ensurePythonVenv,
  pythonSdkDir,
  startTestStack,
  type McpConnection,
  type TestStack,
} from '@mcpgw/devstack';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What the Python SDK does beyond the contract suite every SDK passes
 * (tools/agent-contract, where this SDK's contract agent runs too): a question
 * the user declines or cancels, and resources and prompts, through the real
 * stack (NATS auth on, no mock pod) with the official MCP client.
 */

interface ContractAgent {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

function startContractAgent(
  python: string,
  env: Record<string, string>,
  script = join(pythonSdkDir(), 'tests', 'contract_agent.py'),
): ContractAgent {
  const child = spawn(python, [script], {
    env: { ...process.env, PYTHONUNBUFFERED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err = (err + chunk).slice(-20_000);
    if (process.env.STACK_LOGS === '1') process.stderr.write(`[py-agent] ${chunk}`);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(50);
  }
}

async function ready(agent: ContractAgent, line = 'contract agent ready'): Promise<void> {
  const exitedEarly = agent.exited.then((code) => {
    throw new Error(`the contract agent exited (${code}) before it was ready: ${agent.stderr()}`);
  });
  await Promise.race([until(line, () => agent.stdout().includes(`${line}\n`), 30_000), exitedEarly]);
}

async function stopAgent(agent: ContractAgent | undefined): Promise<number | null | undefined> {
  if (!agent || agent.child.exitCode !== null) return agent?.child.exitCode;
  agent.child.kill('SIGTERM');
  const code = await Promise.race([agent.exited, delay(15_000).then(() => 'timeout' as const)]);
  if (code === 'timeout') {
    agent.child.kill('SIGKILL');
    throw new Error('the contract agent did not stop within 15 s of SIGTERM');
  }
  return code;
}

describe('the Python SDK behind the gateway', () => {
  const agentId = `py-agent-${process.pid}`;
  let env: TestStack;
  let python: string;
  let markers: string;
  let agentEnv: Record<string, string>;
  let agent: ContractAgent | undefined;
  let mcp: McpConnection;

  beforeAll(async () => {
    python = (await ensurePythonVenv()).python;
    markers = mkdtempSync(join(tmpdir(), 'py-contract-'));
    env = await startTestStack({
      pods: 0,
      podEnv: { AGENT_ID: agentId },
      gatewayEnv: {
        FILES_STORAGE: 'local',
        FILES_DIR: join(markers, 'files'),
        FILES_URL_SIGNING_KEYS: `k1:${'s'.repeat(48)}`,
      },
    });
    agentEnv = {
      NATS_URL: env.nats!.url,
      NATS_CREDS: await env.nats!.credsFile({ role: 'agent', agentId }),
      BUS_PREFIX: env.stack.settings.busPrefix,
      AGENT_ID: agentId,
      INBOX_ACK_WAIT_MS: '3000',
      CONTRACT_MARKERS: markers,
    };
    agent = startContractAgent(python, agentEnv);
    await ready(agent);
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  }, 240_000);

  afterAll(async () => {
    await mcp?.close().catch(() => undefined);
    await stopAgent(agent).catch(() => undefined);
    await env?.stop();
    if (markers) rmSync(markers, { recursive: true, force: true });
  });

  it.each([
    ['declined', { action: 'decline' }, 'no name (decline)'],
    ['cancelled', { action: 'cancel' }, 'no name (cancel)'],
  ] as const)('ask_name: the question reaches the client, its answer the skill (%s)', async (_, answer, expected) => {
    const client = new Client({ name: 'asked', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return answer;
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(env.mcpUrl()), {
        requestInit: { headers: { 'X-Agent-API-Key': env.apiKey } },
      }),
    );
    try {
      const result = await client.callTool({ name: 'ask_name', arguments: {} });
      expect(result.content).toEqual([{ type: 'text', text: expected }]);
      expect(asked).toEqual([expect.objectContaining({ message: 'Your name?' })]);
    } finally {
      await client.close();
    }
  });

  it('resources and prompts registered with the SDK are read and rendered through the gateway', async () => {
    const otherId = `${agentId}-catalogue`;
    await env.stack.admin('agent', 'create', '--id', otherId, '--workspace', 'demo');
    const key = await env.stack.admin<{ key: string }>('apikey', 'create', '--agent', otherId);
    const other = startContractAgent(
      python,
      { ...agentEnv, AGENT_ID: otherId, NATS_CREDS: await env.nats!.credsFile({ role: 'agent', agentId: otherId }) },
      join(pythonSdkDir(), 'test', 'catalogue_agent.py'),
    );
    const session = await connectMcp(env.mcpUrl(0, otherId), key.key);
    try {
      await ready(other, 'catalogue agent ready');
      const { resources } = await session.client.listResources();
      expect(resources).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ uri: 'test://python/readme', name: 'Readme', mimeType: 'text/plain' }),
        ]),
      );
      const text = await session.client.readResource({ uri: 'test://python/readme' });
      expect(text.contents).toEqual([
        { uri: 'test://python/readme', mimeType: 'text/plain', text: 'read from python' },
      ]);
      const blob = await session.client.readResource({ uri: 'test://python/pixel' });
      expect(blob.contents).toEqual([
        {
          uri: 'test://python/pixel',
          mimeType: 'image/png',
          blob: Buffer.from('\x89PNG\r\n\x1a\n', 'latin1').toString('base64'),
        },
      ]);
      const { prompts } = await session.client.listPrompts();
      expect(prompts).toEqual([expect.objectContaining({ name: 'greet', description: 'Greets someone' })]);
      const prompt = await session.client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
      expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Say hello to Ada' } }]);
    } finally {
      await session.close();
      expect(await stopAgent(other)).toBe(0);
    }
  });
});
