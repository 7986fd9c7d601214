import {
  connectMcp,
  scrapeMetric,
  startTestStack,
  type McpConnection,
  type ServiceProcess,
  type TestStack,
} from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SLICE_MS = 2_000;
const CALL_TIMEOUT_MS = 40_000;

/**
 * Two message service replicas; the one holding a call's wait is killed while
 * the agent works. The gateway waits in slices (CALL_WAIT_SLICE_MS): the next
 * slice posts the message again, the other replica joins it, and the pod's
 * reply (sent again after the redelivery) reaches it. The call completes,
 * long before its timeout.
 */
describe('a message service replica dies holding a call', () => {
  let env: TestStack;
  let mcp: McpConnection;
  let replicas: ServiceProcess[];

  const openWaits = (replica: ServiceProcess) => scrapeMetric(replica.managementUrl!, 'mcpgw_waits_open');

  beforeAll(async () => {
    env = await startTestStack({
      podEnv: { INBOX_ACK_WAIT_MS: '1500' },
      gatewayEnv: { CALL_WAIT_SLICE_MS: String(SLICE_MS) },
    });
    await env.stack.startMessageService();
    replicas = env.stack.processes.filter((p) => p.name.startsWith('message-service'));
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  it('the call is answered through the other replica', async () => {
    const started = Date.now();
    const call = mcp.client.callTool(
      { name: 'sleep', arguments: { ms: 1_000 }, _meta: { 'mcpgw/timeoutMs': CALL_TIMEOUT_MS } },
      undefined,
      { timeout: CALL_TIMEOUT_MS + 10_000 },
    );
    // Whichever replica took the wait: kill it (no answer to the gateway, no ack for the pod).
    let holder: ServiceProcess | undefined;
    await expect
      .poll(async () => {
        for (const replica of replicas) if ((await openWaits(replica)) > 0) holder = replica;
        return holder;
      })
      .toBeDefined();
    await holder!.kill();

    const result = await call;
    expect(result.content).toEqual([{ type: 'text', text: 'slept 1000 ms' }]);
    expect(Date.now() - started).toBeLessThan(CALL_TIMEOUT_MS / 2);
  });
});

/**
 * The message service caps every wait (WAIT_MAX_MS); a call may be longer. The
 * gateway posts the wait again when one ends early, so the two settings need
 * not agree.
 */
describe('a call longer than the message service lets one wait last', () => {
  let env: TestStack;
  let mcp: McpConnection;

  beforeAll(async () => {
    env = await startTestStack({ env: { WAIT_MAX_MS: '1000' } });
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  it('is answered, not timed out at the first wait', async () => {
    const result = await mcp.client.callTool(
      { name: 'sleep', arguments: { ms: 2_500 }, _meta: { 'mcpgw/timeoutMs': 10_000 } },
      undefined,
      { timeout: 20_000 },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'slept 2500 ms' }]);
  });
});
