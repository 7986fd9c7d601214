import {
  connectMcp,
  exampleAgentCommands,
  mcpInspectorCli,
  startTestStack,
  workspaceRoot,
  type TestStack,
} from '@mcpgw/devstack';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const AGENT = 'my-agent';

/**
 * The example agents (examples/agent-ts, examples/agent-python), started with
 * the command `npm start` prints for them (the one their READMEs give), answer
 * the MCP Inspector CLI and the official SDK client through the gateway.
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
    env = await startTestStack({ pods: 0, podEnv: { AGENT_ID: AGENT } });
  }, 180_000);

  afterAll(async () => {
    await stopExamples();
    await env?.stop();
  });

  const commands = async () =>
    exampleAgentCommands({
      agentId: AGENT,
      natsUrl: env.nats!.url,
      busPrefix: env.stack.settings.busPrefix,
      credsFile: await env.nats!.credsFile({ role: 'agent', agentId: AGENT }),
    });

  it('TypeScript: answers the official SDK client, with progress, and the MCP Inspector CLI', async () => {
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
    } finally {
      await stopExamples();
    }
  }, 120_000);
});
