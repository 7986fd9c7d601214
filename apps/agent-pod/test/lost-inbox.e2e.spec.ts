import { deleteInboxStream } from '@mcpgw/bus';
import { connectMcp, startTestStack, type McpConnection, type TestStack } from '@mcpgw/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The agents' inbox stream is lost (a NATS server with memory storage
 * restarts, or someone deletes it): the message service makes it again, the
 * pods bind their consumer again, and calls work again by themselves.
 */
describe('a lost inbox stream', () => {
  let env: TestStack;
  let mcp: McpConnection;

  const echo = (text: string) =>
    mcp.client.callTool({ name: 'echo', arguments: { text }, _meta: { 'mcpgw/timeoutMs': 1_500 } }, undefined, {
      timeout: 10_000,
    });

  beforeAll(async () => {
    env = await startTestStack();
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await env?.stop();
  });

  it('is made again, and calls are answered again', async () => {
    expect((await echo('before')).content).toEqual([{ type: 'text', text: 'before' }]);
    const nc = await env.connectNats();
    await deleteInboxStream(nc, env.stack.settings.busPrefix);
    await nc.close();

    await expect
      .poll(async () => (await echo('after').catch(() => ({ content: [] }))).content, {
        timeout: 30_000,
        interval: 500,
      })
      .toEqual([{ type: 'text', text: 'after' }]);
  });
});
