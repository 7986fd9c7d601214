import { connectMcp, startTestStack, workspaceRoot, type TestStack } from '@mcpgw/devstack';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = workspaceRoot();
const AGENT = 'packed-agent';

/** The example, as a user writes it in a folder of their own. */
const AGENT_SOURCE = `
import { createAgent, defineSkill } from '@mcpgw/agent-sdk';
const reverse = defineSkill({
  name: 'reverse', description: 'Reverses text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  sideEffectClass: 'read',
  async run(args, ctx) { ctx.progress(1, 2, 'half way'); return args.text.split('').reverse().join(''); },
});
const agent = createAgent({ agentId: '${AGENT}', skills: [reverse] });
await agent.start();
console.log('agent started');
`;

/** The same in TypeScript: the bundled declarations type-check on their own (no skipLibCheck). */
const TYPED_SOURCE = `
import { createAgent, defineSkill, ToolError, type SkillContext } from '@mcpgw/agent-sdk';
const reverse = defineSkill<{ text: string }>({
  name: 'reverse', description: 'Reverses text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  async run(args, ctx: SkillContext) {
    ctx.progress(1, 2, 'half way');
    if (!args.text) throw new ToolError('nothing to reverse');
    return args.text.split('').reverse().join('');
  },
});
export const agent = createAgent({ agentId: 'typed', skills: [reverse] });
`;

/**
 * \`npm pack\` of the SDK (scripts/pack.mjs) installs into an empty folder with
 * only its declared dependencies, and an agent written there answers a call
 * through the gateway.
 */
describe('the packed agent SDK', () => {
  let folder: string;
  let env: TestStack;
  let agent: ChildProcess | undefined;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'mcpgw-sdk-user-'));
    const { stdout } = await run(process.execPath, [join(root, 'libs/agent-sdk/scripts/pack.mjs'), folder]);
    const tarball = stdout.trim().split('\n').at(-1)!;
    writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'my-agent', private: true, type: 'module' }));
    await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], { cwd: folder });
    env = await startTestStack({ pods: 0, podEnv: { AGENT_ID: AGENT } });
  }, 240_000);

  afterAll(async () => {
    agent?.kill('SIGTERM');
    await env?.stop();
    rmSync(folder, { recursive: true, force: true });
  });

  it('depends on public packages only, none of the workspace', () => {
    const manifest = JSON.parse(readFileSync(join(folder, 'node_modules/@mcpgw/agent-sdk/package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      private?: boolean;
    };
    expect(manifest.private).toBeUndefined();
    expect(Object.keys(manifest.dependencies)).toContain('nats');
    expect(
      Object.keys(manifest.dependencies).filter((name) => name.startsWith('@mcpgw/') || name.startsWith('@nestjs/')),
    ).toEqual([]);
  });

  it('installs the mcpgw-bridge command, which says how to use it', async () => {
    const failed = await run(join(folder, 'node_modules/.bin/mcpgw-bridge'), [], { cwd: folder }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining('usage: mcpgw-bridge --agent <id>') });
  });

  it('type-checks a TypeScript agent against its declarations', async () => {
    writeFileSync(join(folder, 'typed.ts'), TYPED_SOURCE);
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const args = ['--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
    await run(process.execPath, [tsc, ...args, '--target', 'es2022', '--lib', 'es2023,dom', 'typed.ts'], {
      cwd: folder,
    });
  }, 60_000);

  it('runs an agent written there, which answers a call with progress', async () => {
    writeFileSync(join(folder, 'agent.mjs'), AGENT_SOURCE);
    const child = spawn(process.execPath, ['agent.mjs'], {
      cwd: folder,
      env: {
        PATH: process.env.PATH ?? '',
        NATS_URL: env.nats!.url,
        NATS_CREDS: await env.nats!.credsFile({ role: 'agent', agentId: AGENT }),
        BUS_PREFIX: env.stack.settings.busPrefix,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    agent = child;
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('agent started') && resolve());
      child.once('exit', (code) => reject(new Error(`the agent exited ${code}: ${stderr}`)));
    });
    const mcp = await connectMcp(env.mcpUrl(0, AGENT), env.apiKey);
    try {
      const progress: Progress[] = [];
      const result = await mcp.client.callTool({ name: 'reverse', arguments: { text: 'stressed' } }, undefined, {
        onprogress: (p) => progress.push(p),
      });
      expect(result.content).toEqual([{ type: 'text', text: 'desserts' }]);
      expect(progress).toEqual([{ progress: 1, total: 2, message: 'half way' }]);
    } finally {
      await mcp.close();
    }
  });
});
