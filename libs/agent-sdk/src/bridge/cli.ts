#!/usr/bin/env node
/*
 * mcpgw-bridge: any MCP server as a bus agent (README.md here).
 *
 *   mcpgw-bridge --agent everything [--env NAME[=value]]… -- npx -y @modelcontextprotocol/server-everything
 *   mcpgw-bridge --agent remote --url https://host/mcp [--header 'Authorization: Bearer …']
 *
 * NATS_URL, NATS_CREDS, BUS_PREFIX (and the agent SDK's other settings) from the environment.
 */
import { startBridge } from './bridge';
import type { UpstreamSpec } from './upstream';

const USAGE = `usage: mcpgw-bridge --agent <id> [--workspace <id>] [--env NAME[=value]]… -- <command> [args…]
       mcpgw-bridge --agent <id> [--workspace <id>] --url <url> [--header 'Name: value']…`;

export interface BridgeArgs {
  agentId: string;
  workspaceId?: string;
  upstream: UpstreamSpec;
}

/**
 * The command line, checked; a wrong one throws with what is wrong. A stdio
 * server's environment is the SDK's safe default and what `--env` names:
 * `--env NAME` passes the bridge's own `NAME` (from `env`), `--env NAME=value` sets it.
 */
export function parseBridgeArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): BridgeArgs {
  let agentId: string | undefined;
  let workspaceId: string | undefined;
  let url: string | undefined;
  const headers: Record<string, string> = {};
  const serverEnv: Record<string, string> = {};
  let envGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--') {
      const [command, ...args] = argv.slice(i + 1);
      if (!command) throw new Error('no command after --');
      if (url) throw new Error('give either --url or a command after --, not both');
      if (!agentId) throw new Error('--agent is required');
      return { agentId, workspaceId, upstream: { kind: 'stdio', command, args, env: serverEnv } };
    }
    if (arg === '--agent') agentId = value();
    else if (arg === '--workspace') workspaceId = value();
    else if (arg === '--url') url = value();
    else if (arg === '--header') {
      const header = value();
      const colon = header.indexOf(':');
      if (colon <= 0) throw new Error(`--header ${JSON.stringify(header)}: expected 'Name: value'`);
      headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (arg === '--env') {
      const given = value();
      envGiven = true;
      const equals = given.indexOf('=');
      const name = equals < 0 ? given : given.slice(0, equals);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
        throw new Error(`--env ${JSON.stringify(given)}: expected NAME or NAME=value`);
      const passed = equals < 0 ? env[name] : given.slice(equals + 1);
      if (passed !== undefined) serverEnv[name] = passed;
    } else throw new Error(`unknown argument ${JSON.stringify(arg)}`);
  }
  if (!agentId) throw new Error('--agent is required');
  if (!url) throw new Error('give the MCP server: --url <url>, or a command after --');
  if (envGiven) throw new Error('--env is for a stdio server (a command after --)');
  if (!/^https?:\/\//.test(url)) throw new Error('--url must be an http(s) URL');
  return { agentId, workspaceId, upstream: { kind: 'http', url, headers } };
}

async function main(): Promise<void> {
  let args: BridgeArgs;
  try {
    args = parseBridgeArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`mcpgw-bridge: ${(error as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  try {
    const bridge = await startBridge({ agentId: args.agentId, workspaceId: args.workspaceId, upstream: args.upstream });
    process.stdout.write(`mcpgw-bridge: agent ${bridge.agent.agentId} is serving the MCP server's tools\n`);
  } catch (error) {
    process.stderr.write(`mcpgw-bridge: ${(error as Error).message}\n`);
    process.exit(1);
  }
}

if (require.main === module) void main();
