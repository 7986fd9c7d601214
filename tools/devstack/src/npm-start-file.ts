import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * `.data/npm-start.json`: where `npm start`'s stack is, for the admin CLI
 * (apps/gateway/src/admin/local-stack.ts reads it; the format is defined there).
 * Written mode 0600 (it names the seed files, and the database URL may hold a
 * password), removed at stop. When another running `npm start` holds it, this one
 * writes `.data/npm-start-<pid>.json` instead, and its commands name that file
 * (`NPM_START_FILE=…`), so that neither stack's CLI reaches the other.
 */
export interface NpmStartFile {
  /** The file, relative to the workspace root (where `npm run admin` runs). */
  path: string;
  /** What a command must be prefixed with to reach this stack: '' for the default file. */
  commandPrefix: string;
  remove(): void;
}

export function writeNpmStartFile(root: string, env: Record<string, string | undefined>): NpmStartFile {
  const standard = join(root, '.data', 'npm-start.json');
  const file = heldByAnother(standard) ? join(root, '.data', `npm-start-${process.pid}.json`) : standard;
  mkdirSync(dirname(file), { recursive: true });
  const settings = Object.fromEntries(Object.entries(env).filter(([, value]) => value));
  writeFileSync(file, `${JSON.stringify({ pid: process.pid, env: settings }, null, 2)}\n`, { mode: 0o600 });
  const path = relative(root, file);
  return {
    path,
    commandPrefix: file === standard ? '' : `NPM_START_FILE=${path} `,
    remove: () => {
      if (ownerOf(file) === process.pid) rmSync(file, { force: true });
    },
  };
}

function heldByAnother(file: string): boolean {
  const pid = ownerOf(file);
  if (pid === undefined || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ownerOf(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const pid = (JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown }).pid;
    return typeof pid === 'number' ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The commands that give a new agent what it needs against this stack, as
 * `npm start` prints them: the agent (an API key needs it to exist; a pod's
 * registration would also make it, in the workspace it names), NATS credentials
 * when the stack's NATS has auth on (`withCredentials`), and an API key.
 */
export function newAgentCommands(options: {
  agentId: string;
  workspaceId: string;
  credsFile: string;
  withCredentials: boolean;
  prefix?: string;
}): string[] {
  const admin = `${options.prefix ?? ''}npm run admin --`;
  return [
    `${admin} agent create --id ${options.agentId} --workspace ${options.workspaceId}`,
    ...(options.withCredentials
      ? [`${admin} agent credentials --agent ${options.agentId} --out ${options.credsFile}`]
      : []),
    `${admin} apikey create --agent ${options.agentId} --label my-laptop`,
  ];
}

/**
 * The commands that run the example agents (examples/agent-ts, examples/agent-python)
 * as that agent against this stack.
 */
export function exampleAgentCommands(options: {
  agentId: string;
  natsUrl: string;
  busPrefix: string;
  credsFile?: string;
}): string[] {
  const env = [
    `AGENT_ID=${options.agentId}`,
    `NATS_URL=${options.natsUrl}`,
    ...(options.credsFile ? [`NATS_CREDS=${options.credsFile}`] : []),
    ...(options.busPrefix === 'mcpgw' ? [] : [`BUS_PREFIX=${options.busPrefix}`]),
  ].join(' ');
  return [
    `${env} npm run example:agent-ts`,
    `${env} .data/python-venv/bin/python examples/agent-python/agent.py   # after: npm run setup:python`,
  ];
}
