import { connectMcp, startTestStack, type McpConnection, type ServiceProcess, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const GRACE_MS = 20_000;
const SHORT_GRACE_MS = 300;
/** libs/runtime/src/shutdown.ts CLOSE_ALLOWANCE_MS: the hard deadline is the grace plus this. */
const CLOSE_ALLOWANCE_MS = 5_000;

/**
 * SIGTERM drains a gateway (libs/runtime/README.md): it is not ready at once,
 * it lets the calls in flight finish, ends its GET streams so the HTTP server
 * can close, and exits 0; a call that outlives the grace is cut, and the
 * process exits 1 by the deadline.
 */
describe('a gateway told to stop', () => {
  let env: TestStack;
  let pod: ServiceProcess;
  const connections: McpConnection[] = [];

  beforeAll(async () => {
    env = await startTestStack({ podEnv: { LOG_LEVEL: 'debug' }, gatewayEnv: { SHUTDOWN_GRACE_MS: String(GRACE_MS) } });
    pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
  });

  afterAll(async () => {
    for (const mcp of connections) await mcp.close().catch(() => undefined);
    await env?.stop();
  });

  /** The pod started the skill of a call: it is in flight. */
  const skillStarted = (since: number) =>
    pod.waitForLog((l) => l.msg === 'skill started' && l.skill === 'sleep', 10_000, 'skill started', since);

  it('is not ready at once, answers the call in flight, ends its GET stream and exits 0 well within the grace', async () => {
    const gateway = env.stack.serving(env.gatewayUrls[0]);
    const mcp = await connectMcp(env.mcpUrl(), env.apiKey);
    connections.push(mcp);
    const stream = await fetch(env.mcpUrl(), {
      headers: { accept: 'text/event-stream', 'x-agent-api-key': env.apiKey, 'mcp-session-id': mcp.sessionId! },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    await reader.read(); // the priming event: the stream is open

    const since = pod.logs.length;
    const call = mcp.client.callTool({ name: 'sleep', arguments: { ms: 1_500 } }, undefined, { timeout: 30_000 });
    await skillStarted(since);

    const stopped = Date.now();
    const exit = gateway.stop(GRACE_MS + CLOSE_ALLOWANCE_MS + 5_000);
    await expect
      .poll(async () => (await fetch(`${gateway.managementUrl}/ready`)).status, { timeout: 1_000, interval: 20 })
      .toBe(503);
    const notReadyAfter = Date.now() - stopped;
    const ready = await fetch(`${gateway.managementUrl}/ready`);
    expect(await ready.json()).toMatchObject({ status: 'not_ready', checks: { shutdown: 'draining' } });

    // The client sees its GET stream end (it would reconnect elsewhere with Last-Event-ID).
    const streamEnded = (async () => {
      while (!(await reader.read()).done);
      return Date.now() - stopped;
    })();
    // New work is refused: 503 on a kept-alive connection, or no connection at all.
    const late = await fetch(env.mcpUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    }).then(
      (response) => response.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);

    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'slept 1500 ms' }]);
    expect(await streamEnded).toBeLessThan(1_000);
    await exit;
    expect(await gateway.exited).toBe(0);
    const exitedAfter = Date.now() - stopped;
    console.log(`gateway drain: not ready after ${notReadyAfter} ms, exited 0 after ${exitedAfter} ms`);
    expect(notReadyAfter).toBeLessThan(500);
    expect(exitedAfter).toBeLessThan(GRACE_MS / 4);
  });

  it('cuts a call that outlives the grace period and exits non-zero by the deadline', async () => {
    const { url, process: gateway } = await env.stack.startGateway({ SHUTDOWN_GRACE_MS: String(SHORT_GRACE_MS) });
    const mcp = await connectMcp(`${url}/${env.agentId}/mcp`, env.apiKey);
    connections.push(mcp);
    const since = pod.logs.length;
    const call = mcp.client
      .callTool({ name: 'sleep', arguments: { ms: 4_000 } }, undefined, { timeout: 30_000 })
      .catch((error: Error) => error);
    await skillStarted(since);

    const stopped = Date.now();
    await gateway.stop(SHORT_GRACE_MS + CLOSE_ALLOWANCE_MS + 5_000);
    const exitedAfter = Date.now() - stopped;
    console.log(`gateway past its grace: exited ${await gateway.exited} after ${exitedAfter} ms`);
    expect(await gateway.exited).toBe(1);
    expect(exitedAfter).toBeGreaterThanOrEqual(SHORT_GRACE_MS);
    expect(exitedAfter).toBeLessThan(SHORT_GRACE_MS + CLOSE_ALLOWANCE_MS);
    // What was cut is named in the logs.
    const cut = gateway.logs.find((l) => l.msg === 'grace period over: handing back what is left');
    expect(cut?.pending).toEqual(expect.arrayContaining(['calls: 1 call(s) running']));
    expect(await call).toBeInstanceOf(Error); // the client's request died with the gateway
  });
});
