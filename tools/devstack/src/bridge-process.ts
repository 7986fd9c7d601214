import { spawn, type ChildProcess } from 'node:child_process';
import { workspaceRoot } from './stack';
import type { TestStack } from './test-stack';

/** A Streamable HTTP server: `--url`, and `--header 'Name: value'` for each header. */
export interface HttpUpstream {
  url: string;
  headers?: string[];
}

/** A stdio server: its command line, and `--env` for each `NAME` (or `NAME=value`) of its environment. */
export interface StdioUpstream {
  command: string[];
  env: string[];
}

export type BridgeProcess = ChildProcess & {
  /** All the bridge printed so far (stdout and stderr). */
  output(): string;
};

/**
 * `npm run bridge -- --agent <agent> [--env …] -- <server…>` (or `--url <url> --header …`)
 * as the README runs it, on the agent's own NATS credentials; resolves once it
 * serves. Its own process group (`process.kill(-bridge.pid)` stops npm, the
 * bridge and its stdio server together).
 */
export async function startBridgeProcess(
  env: TestStack,
  agentId: string,
  server: string[] | StdioUpstream | HttpUpstream,
  extraEnv: Record<string, string> = {},
): Promise<BridgeProcess> {
  let output = '';
  const upstream = Array.isArray(server)
    ? ['--', ...server]
    : 'command' in server
      ? [...server.env.flatMap((name) => ['--env', name]), '--', ...server.command]
      : ['--url', server.url, ...(server.headers ?? []).flatMap((header) => ['--header', header])];
  const bridge = spawn('npm', ['run', '-s', 'bridge', '--', '--agent', agentId, ...upstream], {
    cwd: workspaceRoot(),
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NATS_URL: env.nats!.url,
      NATS_CREDS: await env.nats!.credsFile({ role: 'agent', agentId }),
      BUS_PREFIX: env.stack.settings.busPrefix,
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  bridge.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  bridge.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    bridge.stdout!.on('data', () => output.includes('is serving') && resolve());
    bridge.once('exit', (code) => reject(new Error(`the bridge exited ${code}:\n${output}`)));
  });
  return Object.assign(bridge, { output: () => output });
}
