import { ensurePythonVenv, workspaceRoot } from '@mcpgw/devstack';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** An SDK under contract: how to start its contract agent (../README.md). */
export interface ContractSdk {
  name: string;
  command(): Promise<{ file: string; args: string[] }>;
}

const root = workspaceRoot();

export const CONTRACT_SDKS: ContractSdk[] = [
  {
    name: 'typescript',
    command: async () => ({
      file: process.execPath,
      args: [join(root, 'tools/agent-contract/dist/contract-agent.js')],
    }),
  },
  {
    name: 'python',
    command: async () => ({
      // The venv .ci/run makes (sdks/python/make-venv.sh): pip install ./sdks/python.
      file: (await ensurePythonVenv()).python,
      args: [join(root, 'sdks/python/tests/contract_agent.py')],
    }),
  },
];

/** A contract agent running as a process. */
export interface ContractAgent {
  readonly pid: number;
  /** Resolves with the exit code (a signal's death counts as 128 + its number). */
  readonly exited: Promise<number>;
  stderr(): string;
  /** Send a signal and wait for the exit. */
  kill(signal: NodeJS.Signals): Promise<number>;
  /** SIGTERM, if it still runs. */
  stop(): Promise<void>;
}

const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2 };

/**
 * Start a contract agent and wait for its `contract agent ready` line (or,
 * with `expectReady: false`, only start it: the caller waits for its exit).
 */
export async function startContractAgent(
  sdk: ContractSdk,
  env: Record<string, string>,
  options: { expectReady?: boolean } = {},
): Promise<ContractAgent> {
  const { file, args } = await sdk.command();
  const child = spawn(file, args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PYTHONUNBUFFERED: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal ? (SIGNALS[signal] ?? 0) : 0))),
  );
  const agent: ContractAgent = {
    pid: child.pid!,
    exited,
    stderr: () => err,
    kill: (signal) => {
      child.kill(signal);
      return exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) await agent.kill('SIGTERM');
    },
  };
  if (options.expectReady === false) return agent;
  const ready = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = () => out.includes('contract agent ready') && resolve(true);
      child.stdout.on('data', check);
      check();
    }),
    exited.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(resolve, 60_000, false).unref()),
  ]);
  if (!ready) {
    await agent.stop();
    throw new Error(`the ${sdk.name} contract agent did not start:\n${err.slice(-4_000)}`);
  }
  return agent;
}
