import { connectMcp, startTestStack, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

type Turns = { turns: { tool: string; arguments: Record<string, unknown> }[] };

/** Sessions live in PostgreSQL: any replica serves them, and they outlive a gateway. */
describe('sessions across gateway replicas and restarts', () => {
  let env: TestStack;

  beforeAll(async () => {
    env = await startTestStack({ gateways: 2 });
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('a second gateway instance serves a session made on the first, in the same conversation', async () => {
    const onFirst = await connectMcp(env.mcpUrl(0), env.apiKey);
    await onFirst.client.callTool({ name: 'echo', arguments: { text: 'said to gateway 1' } });

    const onSecond = await connectMcp(env.mcpUrl(1), env.apiKey, { sessionId: onFirst.sessionId });
    expect(onSecond.sessionId).toBe(onFirst.sessionId);
    await onSecond.client.callTool({ name: 'echo', arguments: { text: 'said to gateway 2' } });
    const recalled = await onSecond.client.callTool({ name: 'recall', arguments: {} });

    expect((recalled.structuredContent as Turns).turns.map((t) => t.arguments.text)).toEqual([
      'said to gateway 1',
      'said to gateway 2',
    ]);
    await onSecond.close();
    await onFirst.close();
  });

  it('a session ended on one gateway is gone on the other within a second, though it had cached it', async () => {
    const onFirst = await connectMcp(env.mcpUrl(0), env.apiKey);
    const id = onFirst.sessionId!;
    const pingOnSecond = () =>
      fetch(env.mcpUrl(1), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-agent-api-key': env.apiKey,
          'mcp-session-id': id,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      }).then((r) => r.status);
    expect(await pingOnSecond()).toBe(200); // now the second gateway has the session cached

    await onFirst.transport.terminateSession();
    const endedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - endedAt < 1_000) status = await pingOnSecond();
    expect(status).toBe(404);
  });

  it('a gateway restart in the middle of a session loses nothing', async () => {
    const gateway = env.stack.serving(env.gatewayUrls[0]);
    const port = new URL(env.gatewayUrls[0]).port;
    const session = await connectMcp(env.mcpUrl(0), env.apiKey);
    await session.client.callTool({ name: 'echo', arguments: { text: 'before the restart' } });

    await gateway.stop();
    await env.stack.startGateway({ GATEWAY_PORT: port });

    // The same client, the same session id, a new gateway process.
    await session.client.callTool({ name: 'echo', arguments: { text: 'after the restart' } });
    const recalled = await session.client.callTool({ name: 'recall', arguments: {} });
    expect((recalled.structuredContent as Turns).turns.map((t) => t.arguments.text)).toEqual([
      'before the restart',
      'after the restart',
    ]);
    await session.close();
  });
});
