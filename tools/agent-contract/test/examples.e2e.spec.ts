import {
  a2aClient,
  connectMcp,
  ensurePythonVenv,
  exampleAgentCommands,
  mcpInspectorCli,
  startTestStack,
  textPart,
  userMessage,
  workspaceRoot,
  type TestStack,
} from '@mcpgw/devstack';
import type { Message } from '@a2a-js/sdk';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const AGENT = 'my-agent';
const run = promisify(execFile);

/**
 * The example agents (examples/agent-ts, examples/agent-python), started with
 * the command `npm start` prints for them (the one their READMEs give), answer
 * the MCP Inspector CLI and the official SDK client through the gateway, and
 * their message handler a conversational A2A message of the official A2A SDK.
 */
describe('the example agents', () => {
  let env: TestStack;
  const running: ChildProcess[] = [];

  /** Run a printed command line in the repository, as a user's shell would; resolves once the agent serves. */
  const startExample = async (line: string): Promise<void> => {
    // Its own process group: a stop reaches the shell, npm and the agent.
    const child = spawn('sh', ['-c', line], {
      cwd: workspaceRoot(),
      detached: true,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.push(child);
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()).includes('is serving') && resolve());
      child.once('exit', (code) => reject(new Error(`"${line}" exited ${code}:\n${output}`)));
    });
  };
  const stopExamples = async () => {
    await Promise.all(
      running.splice(0).map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            process.kill(-child.pid!, 'SIGTERM');
          }),
      ),
    );
  };

  beforeAll(async () => {
    await ensurePythonVenv(); // what `npm run setup:python` makes, as the Python example's README asks
    env = await startTestStack({ pods: 0, podEnv: { AGENT_ID: AGENT } });
  }, 600_000);

  afterAll(async () => {
    await stopExamples();
    await env?.stop();
  });

  /**
   * Two A2A messages that name no skill, in one contextId, through the official A2A SDK: the card
   * says the agent converses, and its handler answers both, the second as the conversation's second.
   */
  const converse = async () => {
    const client = await a2aClient(`${env.gatewayUrls[0]}/a2a/${AGENT}/`, 'JSONRPC', env.apiKey);
    const card = await client.getAgentCard();
    expect(card.capabilities?.extensions.map((e) => e.uri)).toContain('urn:mcpgw:a2a:conversation:v1');
    const say = async (text: string, contextId = '') =>
      (await client.sendMessage({
        tenant: '',
        message: userMessage(undefined, [textPart(text)], { contextId }),
        configuration: undefined,
        metadata: undefined,
      })) as Message;
    const textOf = (answer: Message) =>
      answer.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
    const first = await say('hello');
    expect(textOf(first)).toBe('you said: hello (message 1 of this conversation)');
    expect(textOf(await say('again', first.contextId))).toBe('you said: again (message 2 of this conversation)');
  };

  const commands = async () =>
    exampleAgentCommands({
      agentId: AGENT,
      natsUrl: env.nats!.url,
      busPrefix: env.stack.settings.busPrefix,
      credsFile: await env.nats!.credsFile({ role: 'agent', agentId: AGENT }),
    });

  it('TypeScript: answers the official SDK client, with progress, the MCP Inspector CLI, and a conversation', async () => {
    const [typescript] = await commands();
    expect(typescript).toContain('npm run example:agent-ts');
    await startExample(typescript);
    try {
      const mcp = await connectMcp(env.mcpUrl(0, AGENT), env.apiKey);
      try {
        const progress: Progress[] = [];
        const result = await mcp.client.callTool({ name: 'reverse', arguments: { text: 'stressed' } }, undefined, {
          onprogress: (p) => progress.push(p),
        });
        expect(result.content).toEqual([{ type: 'text', text: 'desserts' }]);
        expect(progress).toEqual([{ progress: 1, total: 2, message: 'half way' }]);
        expect(await mcp.client.callTool({ name: 'word_count', arguments: { text: 'one two three' } })).toMatchObject({
          structuredContent: { words: 3 },
        });
      } finally {
        await mcp.close();
      }
      const url = env.mcpUrl(0, AGENT).replace('127.0.0.1', 'localhost');
      const args = ['--method', 'tools/call', '--tool-name', 'reverse', '--tool-arg', 'text=stressed'];
      const called = await mcpInspectorCli(url, env.apiKey, args);
      expect(called.code, called.stderr).toBe(0);
      expect(JSON.parse(called.stdout).content).toEqual([{ type: 'text', text: 'desserts' }]);
      await converse();
    } finally {
      await stopExamples();
    }
  }, 120_000);

  it('Python: answers the official Python MCP client (mcp 2.3.0), with progress, the Inspector CLI, and a conversation', async () => {
    const [, python] = await commands();
    expect(python).toContain('examples/agent-python/agent.py');
    await startExample(python.replace(/\s+#.*$/, ''));
    try {
      const { python: interpreter } = await ensurePythonVenv();
      const client = join(workspaceRoot(), 'sdks/python/test/mcp_call.py');
      const call = async (tool: string, args: object) => {
        const { stdout } = await run(interpreter, [client, env.mcpUrl(0, AGENT), tool, JSON.stringify(args)], {
          env: { PATH: process.env.PATH ?? '', MCP_API_KEY: env.apiKey },
          timeout: 60_000,
        });
        return JSON.parse(stdout.trim().split('\n').at(-1)!) as {
          isError: boolean;
          content: unknown[];
          structured: unknown;
          progress: unknown[];
        };
      };
      const reversed = await call('reverse', { text: 'stressed' });
      expect(reversed).toMatchObject({ isError: false, content: [{ type: 'text', text: 'desserts' }] });
      expect(reversed.progress).toEqual([{ progress: 1, total: 2, message: 'half way' }]);
      expect(await call('word_count', { text: 'one two three' })).toMatchObject({ structured: { words: 3 } });
      const url = env.mcpUrl(0, AGENT).replace('127.0.0.1', 'localhost');
      const args = ['--method', 'tools/call', '--tool-name', 'reverse', '--tool-arg', 'text=stressed'];
      const called = await mcpInspectorCli(url, env.apiKey, args);
      expect(called.code, called.stderr).toBe(0);
      expect(JSON.parse(called.stdout).content).toEqual([{ type: 'text', text: 'desserts' }]);
      await converse();
    } finally {
      await stopExamples();
    }
  }, 120_000);
});
