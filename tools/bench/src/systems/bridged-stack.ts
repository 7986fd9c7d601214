import { connectMcp, startTestStack, workspaceRoot } from '@mcpgw/devstack';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ChildService } from './child-service';
import { STACK_ENV, appGroups, appMetrics, serverGroups } from './stack';
import type { RunningSystem } from './system';

const AGENT = 'bench-bridge';
const STDIO_ECHO = join(__dirname, 'stdio-echo.js');

/**
 * (a) with the bridge instead of the mock pod: the same stack and settings,
 * and `mcpgw-bridge` fronting the stdio echo server that mcp-proxy and
 * supergateway front (one stdio child, like mcp-proxy), as the agent. The
 * bridge and its stdio child are charged to the system.
 */
export async function startBridgedStack(): Promise<RunningSystem> {
  const stack = await startTestStack({ env: STACK_ENV, pods: 0, podEnv: { AGENT_ID: AGENT } });
  let bridge: ChildService | undefined;
  try {
    bridge = new ChildService(
      'bridge + stdio echo',
      process.execPath,
      [
        join(workspaceRoot(), 'libs/agent-sdk/dist/bridge/cli.js'),
        '--agent',
        AGENT,
        '--',
        process.execPath,
        STDIO_ECHO,
      ],
      {
        PATH: process.env.PATH,
        NATS_URL: stack.nats!.url,
        NATS_CREDS: await stack.nats!.credsFile({ role: 'agent', agentId: AGENT }),
        BUS_PREFIX: stack.stack.settings.busPrefix,
        AGENT_CONCURRENCY: STACK_ENV.POD_CONCURRENCY,
      },
    );
    await registered(stack.mcpUrl(), stack.apiKey, bridge);
    const running = bridge;
    return {
      id: 'stack-bridge',
      label: 'stack + bridge + stdio echo (a3)',
      target: { url: stack.mcpUrl(), headers: { 'X-Agent-API-Key': stack.apiKey }, stateful: true },
      groups: [...appGroups(stack), { name: running.name, pids: [running.pid] }, ...serverGroups()],
      metrics: appMetrics(stack),
      stop: async () => {
        await running.stop();
        await stack.stop();
      },
    };
  } catch (error) {
    await bridge?.stop();
    await stack.stop();
    throw error;
  }
}

/** Until the gateway lists the echo tool the bridge registered. */
async function registered(url: string, key: string, bridge: ChildService): Promise<void> {
  const mcp = await connectMcp(url, key);
  try {
    for (const until = Date.now() + 30_000; Date.now() < until; await delay(200)) {
      const failed = bridge.exited();
      if (failed) throw new Error(failed);
      const { tools } = await mcp.client.listTools();
      if (tools.some((t) => t.name === 'echo')) return;
    }
    throw new Error('the bridge did not register the echo tool within 30 s');
  } finally {
    await mcp.close();
  }
}
