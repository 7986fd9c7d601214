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
import { ElicitRequestSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { FilesApi } from '@mcpgw/files-client';
import { createHash, randomBytes } from 'node:crypto';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The Python SDK against the real stack (gateway, message service, NATS with
 * auth on, PostgreSQL), without the mock pod: its contract agent
 * (sdks/python/tests/contract_agent.py) serves a fresh agent id with that
 * agent's own credentials, and the official MCP clients (TypeScript, and
 * Python for progress) call it through the gateway.
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

  it('lists the contract skills, registered by the SDK', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['add', 'ask_name', 'attachment', 'echo', 'fail', 'image', 'report', 'wait'].sort(),
    );
    expect(tools.find((t) => t.name === 'add')?.outputSchema).toMatchObject({
      properties: { sum: { type: 'number' } },
    });
  });

  it('echo: a string becomes one text item', async () => {
    const result = await mcp.client.callTool({ name: 'echo', arguments: { text: 'héllo from python' } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'héllo from python' }]);
  });

  it('image: content items as returned', async () => {
    const result = await mcp.client.callTool({ name: 'image', arguments: {} });
    expect(result.content).toEqual([
      { type: 'image', mimeType: 'image/png', data: expect.stringMatching(/^iVBOR/) },
      { type: 'text', text: 'a pixel' },
    ]);
  });

  it('add: content and structured content', async () => {
    const result = await mcp.client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: '42' }]);
    expect(result.structuredContent).toEqual({ sum: 42 });
  });

  it('fail: ToolError is an isError result with its message', async () => {
    const result = await mcp.client.callTool({ name: 'fail', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'this tool fails on purpose' }]);
  });

  it('report: progress notifications reach the client before the result', async () => {
    const seen: Progress[] = [];
    const result = await mcp.client.callTool({ name: 'report', arguments: { steps: 4 } }, undefined, {
      onprogress: (progress) => seen.push(progress),
    });
    expect(result.content).toEqual([{ type: 'text', text: 'reported 4' }]);
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
    expect(seen.at(-1)).toMatchObject({ total: 4, message: 'step 4' });
  });

  it('wait, cancelled by the client: the skill is stopped (marker says cancelled), no result', async () => {
    const key = `cancel-${Date.now()}`;
    const controller = new AbortController();
    const call = mcp.client
      .callTool({ name: 'wait', arguments: { key, ms: 20_000 } }, undefined, { signal: controller.signal })
      .catch((error: Error) => error);
    await until('the wait skill to start', () => existsSync(join(markers, `started-${key}`)));
    controller.abort('enough');
    expect(await call).toBeInstanceOf(Error);
    const stopped = await until('the stopped marker', () => {
      const file = join(markers, `stopped-${key}`);
      return existsSync(file) && readFileSync(file, 'utf8');
    });
    expect(stopped).toBe('cancelled');
    // It ran once, in this agent.
    expect(
      readFileSync(join(markers, `started-${key}`), 'utf8')
        .trim()
        .split('\n'),
    ).toEqual([String(agent!.child.pid)]);
    // The agent still answers.
    const after = await mcp.client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    expect(after.content).toEqual([{ type: 'text', text: 'still here' }]);
  });

  it.each([
    ['accepted', { action: 'accept', content: { name: 'Ada' } }, 'hello Ada'],
    ['declined', { action: 'decline' }, 'no name (decline)'],
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

  it("wait past the call's deadline: the skill is stopped (marker says deadline)", async () => {
    const key = `deadline-${Date.now()}`;
    const error = await mcp.client
      .callTool({ name: 'wait', arguments: { key, ms: 20_000 }, _meta: { 'mcpgw/timeoutMs': 800 } }, undefined, {
        timeout: 15_000,
      })
      .then(
        (result) => result,
        (e: unknown) => e,
      );
    expect(error).toBeDefined();
    const stopped = await until('the stopped marker', () => {
      const file = join(markers, `stopped-${key}`);
      return existsSync(file) && readFileSync(file, 'utf8');
    });
    expect(stopped).toBe('deadline');
  });

  it('attachment: the agent downloads each attached file through its signed URL', async () => {
    const files = new FilesApi({ baseUrl: env.gatewayUrls[0], apiKey: env.apiKey });
    const bytes = randomBytes(150_000);
    const fileId = await files.upload(bytes, { filename: 'data.bin', contentType: 'application/octet-stream' });
    const result = await mcp.client.callTool({ name: 'attachment', arguments: { attachments: [{ file_id: fileId }] } });
    expect(result.isError).toBeFalsy();
    const expected = {
      files: [{ name: 'data.bin', size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }],
    };
    expect(result.structuredContent).toEqual(expected);
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(expected) }]);
  });

  it('the official Python MCP client sees the progress of report', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        python,
        [join(pythonSdkDir(), 'test', 'mcp_report_client.py'), env.mcpUrl(), '3'],
        { env: { ...process.env, MCP_API_KEY: env.apiKey }, timeout: 30_000 },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      ),
    );
    const seen = JSON.parse(out.trim().split('\n').at(-1)!) as {
      isError: boolean;
      content: unknown[];
      progress: { progress: number; total: number; message: string }[];
    };
    expect(seen.isError).toBe(false);
    expect(seen.content).toEqual([{ type: 'text', text: 'reported 3' }]);
    expect(seen.progress.map((p) => p.progress)).toEqual([1, 2, 3]);
    expect(seen.progress.at(-1)).toMatchObject({ total: 3, message: 'step 3' });
  });

  it('an agent killed mid-skill: the message goes to the next agent after the ack wait, which runs it and stores its reply', async () => {
    const key = `killed-${Date.now()}`;
    const call = mcp.client.callTool({ name: 'wait', arguments: { key, ms: 1_500 } }, undefined, { timeout: 30_000 });
    const started = join(markers, `started-${key}`);
    await until('the wait skill to start', () => existsSync(started));
    const first = agent!;
    first.child.kill('SIGKILL');
    await first.exited;
    agent = startContractAgent(python, agentEnv);
    await ready(agent);
    const result = await call;
    expect(result.content).toEqual([{ type: 'text', text: `waited 1500 in ${agent.child.pid}` }]);
    expect(readFileSync(started, 'utf8').trim().split('\n')).toEqual([
      String(first.child.pid),
      String(agent.child.pid),
    ]);
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

  it("another agent's credentials are refused: the agent exits non-zero naming NATS_CREDS", async () => {
    const other = startContractAgent(python, {
      ...agentEnv,
      NATS_CREDS: await env.nats!.credsFile({ role: 'agent', agentId: `${agentId}-other` }),
    });
    const code = await Promise.race([other.exited, delay(20_000).then(() => 'timeout' as const)]);
    if (code === 'timeout') other.child.kill('SIGKILL');
    expect(code).not.toBe('timeout');
    expect(code).not.toBe(0);
    expect(other.stderr()).toMatch(/NATS_CREDS/);
    expect(other.stdout()).not.toContain('contract agent ready');
  });

  it('SIGTERM drains the agent and it exits 0', async () => {
    expect(await stopAgent(agent)).toBe(0);
  });
});
