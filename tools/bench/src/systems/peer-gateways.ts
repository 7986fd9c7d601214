import { freePort, workspaceRoot } from '@mcpgw/devstack';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ChildService } from './child-service';
import type { RunningSystem } from './system';

/**
 * The peers live in a prefix of their own (tools/bench/peers: its package.json says why), installed
 * from its lock file the first time a run needs them.
 */
const PEERS = join(workspaceRoot(), 'tools', 'bench', 'peers');

/** The entry point of a peer's binary (tools/bench/peers/node_modules/<pkg>/package.json "bin"). */
function binOf(pkg: string): string {
  const dir = join(PEERS, 'node_modules', pkg);
  if (!existsSync(join(dir, 'package.json'))) {
    console.log(`installing the bench's peer gateways (npm ci --prefix ${PEERS})…`);
    execFileSync('npm', ['ci', '--prefix', PEERS, '--no-audit', '--no-fund'], { stdio: 'inherit' });
  }
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    bin: string | Record<string, string>;
  };
  return join(dir, typeof manifest.bin === 'string' ? manifest.bin : manifest.bin[pkg]);
}

const STDIO_ECHO = join(__dirname, 'stdio-echo.js');

/**
 * (c) an npm MCP gateway fronting the stdio echo server, as its README runs it,
 * serving Streamable HTTP with sessions on a loopback port. The stdio servers
 * it spawns are its descendants, so their CPU and RSS are charged to it.
 */
export async function startPeerGateway(which: 'mcp-proxy' | 'supergateway'): Promise<RunningSystem> {
  const port = await freePort();
  const args =
    which === 'mcp-proxy'
      ? // one stdio child, shared by all sessions; stateful by default
        ['--host', '127.0.0.1', '--port', String(port), '--server', 'stream', '--', process.execPath, STDIO_ECHO]
      : // one stdio child per session; logs off (its default "info" logs every message)
        [
          '--stdio',
          `"${process.execPath}" "${STDIO_ECHO}"`,
          '--outputTransport',
          'streamableHttp',
          '--stateful',
          '--port',
          String(port),
          '--logLevel',
          'none',
        ];
  const gateway = new ChildService(which, process.execPath, [binOf(which), ...args]);
  try {
    await gateway.listening(port);
  } catch (error) {
    await gateway.stop();
    throw error;
  }
  return {
    id: which,
    label: which === 'mcp-proxy' ? 'mcp-proxy 6.7.19 (c)' : 'supergateway 4.0.0 --stateful (c)',
    target: { url: `http://127.0.0.1:${port}/mcp`, headers: {}, stateful: true },
    groups: [{ name: `${which} + stdio echo`, pids: [gateway.pid] }],
    metrics: [],
    stop: () => gateway.stop(),
  };
}
