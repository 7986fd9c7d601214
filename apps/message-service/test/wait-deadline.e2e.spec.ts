import { decodeJson, encodeJson } from '@mcpgw/bus';
import { BusPattern } from '@mcpgw/contracts';
import { Stack, isolatedEnvironment, type Isolation } from '@mcpgw/devstack';
import type { NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A wait lasts the time the request names, from its arrival, and no longer
 * than the agent's own budget on the message: no margin is added here. (No pod
 * runs in this stack, so no reply ever comes.)
 */
describe('how long the message service waits', () => {
  let isolation: Isolation;
  let stack: Stack;
  let nc: NatsConnection;

  const request = async (pattern: string, body: unknown) => {
    const started = Date.now();
    const answer = await nc.request(`${isolation.busPrefix}.${pattern}`, encodeJson(body), { timeout: 15_000 });
    return {
      reply: decodeJson(answer.data) as { ok: boolean; data: { result?: unknown; status?: string } },
      ms: Date.now() - started,
    };
  };

  const chatMessage = (meta?: Record<string, unknown>) => ({
    type: 'chat_message',
    id: randomUUID(),
    agent_id: 'deadline-agent',
    sender: { kind: 'mcp_client', id: 'tester' },
    created_at: new Date().toISOString(),
    tool_call: { name: 'sleep', arguments: { ms: 10_000 } },
    ...(meta ? { meta } : {}),
  });

  beforeAll(async () => {
    isolation = await isolatedEnvironment('wait-deadline', { migrated: true });
    stack = new Stack(isolation);
    await stack.startMessageService();
    nc = await isolation.connectNats();
  });

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await isolation?.remove();
  });

  it("ends a post_and_wait at the agent's deadline on the message, though the request asked for longer", async () => {
    const { reply, ms } = await request(BusPattern.PostAndWait, {
      envelope: chatMessage({ timeout_ms: 400 }),
      timeout_ms: 8_000,
    });
    expect(reply).toMatchObject({ ok: true, data: { result: { status: 'timeout' } } });
    expect(ms).toBeGreaterThanOrEqual(390);
    expect(ms).toBeLessThan(2_000);
  });

  it('waits what the request names when the message carries no budget (an older sender)', async () => {
    const { reply, ms } = await request(BusPattern.PostAndWait, { envelope: chatMessage(), timeout_ms: 700 });
    expect(reply).toMatchObject({ ok: true, data: { result: { status: 'timeout' } } });
    expect(ms).toBeGreaterThanOrEqual(690);
    expect(ms).toBeLessThan(2_500);
  });

  it('answers a wait request at the time it names, counted from its arrival', async () => {
    const message = chatMessage({ timeout_ms: 60_000 });
    const posted = await request(BusPattern.PostAndWait, { envelope: message, timeout_ms: 0 });
    const channelId = (posted.reply.data as unknown as { channel_id: string }).channel_id;
    const { reply, ms } = await request(BusPattern.WaitForReply, {
      channel_id: channelId,
      message_id: message.id,
      timeout_ms: 500,
    });
    expect(reply).toEqual({ ok: true, data: { status: 'timeout' } });
    expect(ms).toBeGreaterThanOrEqual(490);
    expect(ms).toBeLessThan(2_000);
  });
});
