import { freePort } from '@mcpgw/devstack';
import { join } from 'node:path';
import { ChildService } from './child-service';
import type { RunningSystem } from './system';

/** b1 (stateless) and b2 (stateful): the SDK's McpServer + StreamableHTTPServerTransport in a process of its own. */
export async function startBareSdk(mode: 'stateless' | 'stateful'): Promise<RunningSystem> {
  const port = await freePort();
  const server = new ChildService(`sdk-${mode}`, process.execPath, [
    join(__dirname, 'sdk-server.js'),
    mode,
    String(port),
  ]);
  try {
    await server.listening(port);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    id: mode === 'stateless' ? 'sdk-stateless' : 'sdk-stateful',
    label: `SDK ${mode} (b${mode === 'stateless' ? 1 : 2})`,
    target: { url: `http://127.0.0.1:${port}/mcp`, headers: {}, stateful: mode === 'stateful' },
    groups: [{ name: server.name, pids: [server.pid] }],
    metrics: [],
    stop: () => server.stop(),
  };
}
