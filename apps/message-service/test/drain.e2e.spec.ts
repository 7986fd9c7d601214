import {
  connectMcp,
  scrapeMetric,
  startTestStack,
  type McpConnection,
  type ServiceProcess,
  type TestStack,
} from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SLICE_MS = 10_000;
/** Long enough that the wait is seen open on a loaded CI machine before the skill is done. */
const SKILL_MS = 4_000;

/**
 * Two message service replicas; the one holding a call's wait is told to stop
 * (SIGTERM) while the agent works. It gives the wait back at once
 * ("unavailable", ReplicaDrainingError): the gateway waits again on the other
 * replica, with no slice lost. The pod's reply still comes to the draining
 * replica (it delivered the message), which stores it before it exits 0; the
 * other replica hears of it and answers the call.
 */
describe('a message service replica told to stop while it holds a call', () => {
  let env: TestStack;
  let mcp: McpConnection;
  let replicas: ServiceProcess[];

  const openWaits = (replica: ServiceProcess) => scrapeMetric(replica.managementUrl!, 'mcpgw_waits_open');

  beforeAll(async () => {
    env = await startTestStack({ gatewayEnv: { CALL_WAIT_SLICE_MS: String(SLICE_MS) } });
    await env.stack.startMessageService();
    replicas = env.stack.processes.filter((p) => p.name.startsWith('message-service'));
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  it('the call is answered through the other replica, promptly, and the replica exits 0', async () => {
    const started = Date.now();
    const call = mcp.client.callTool({ name: 'sleep', arguments: { ms: SKILL_MS } }, undefined, { timeout: 30_000 });
    let holder: ServiceProcess | undefined;
    await expect
      .poll(
        async () => {
          for (const replica of replicas) if ((await openWaits(replica)) > 0) holder = replica;
          return holder;
        },
        { timeout: SKILL_MS - 1_000 },
      )
      .toBeDefined();
    const other = replicas.find((r) => r !== holder)!;

    const stopped = Date.now();
    const exit = holder!.stop(30_000);
    // The wait moves to the other replica at once, not after a slice.
    await expect.poll(() => openWaits(other), { timeout: 1_000, interval: 20 }).toBeGreaterThan(0);
    const movedAfter = Date.now() - stopped;

    const result = await call;
    const answeredAfter = Date.now() - started;
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: `slept ${SKILL_MS} ms` }]);
    await exit;
    const exitedAfter = Date.now() - stopped;
    console.log(
      `message service drain: wait moved after ${movedAfter} ms, call answered after ${answeredAfter} ms, replica exited ${await holder!.exited} after ${exitedAfter} ms`,
    );
    expect(await holder!.exited).toBe(0);
    expect(answeredAfter).toBeLessThan(SKILL_MS + SLICE_MS / 2);
    expect(exitedAfter).toBeLessThan(SKILL_MS + 3_000);
  });
});
