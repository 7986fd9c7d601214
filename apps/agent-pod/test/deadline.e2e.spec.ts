import {
  agentInboxState,
  connectMcp,
  messageServiceRest,
  startTestStack,
  toolCallMessage,
  type McpConnection,
  type TestStack,
} from '@mcpgw/devstack';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The call's deadline reaches the pod on the message (`meta.timeout_ms`, the
 * time left): when it passes, the pod stops the skill, stores no reply and
 * acks the message, as for a cancel. A message without one runs to the end.
 */
describe("a call's deadline on the pod", () => {
  let env: TestStack;
  let nc: NatsConnection;
  let mcp: McpConnection;

  const pod = () => env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
  const inbox = () => agentInboxState(nc, env.stack.settings.busPrefix, env.agentId);
  const rest = () => messageServiceRest(() => env.messageServiceUrl, env.stack.messageServiceToken);

  /** Post a tool call over the message service's REST mirror, as an older or another sender would. */
  const postCall = async (tool: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => {
    const channel = await rest().post('/channels', { agent_id: env.agentId });
    const message = toolCallMessage(channel.id, env.agentId, tool, args, meta ? { meta } : {});
    expect((await rest().post(`/channels/${channel.id}/messages`, message)).duplicate).toBe(false);
    return { channelId: channel.id as string, message };
  };

  const stoppedAtDeadline = (messageId: string) =>
    pod().logs.some((l) => l.msg === 'skill stopped at its deadline' && l.message_id === messageId);
  const replies = async (channelId: string) =>
    (await rest().get(`/channels/${channelId}/messages`)).messages.filter(
      (m: { envelope: { type: string } }) => m.envelope.type === 'agent_reply',
    );

  beforeAll(async () => {
    env = await startTestStack({ pods: 1, podEnv: { LOG_LEVEL: 'debug' } });
    nc = await env.connectNats();
    mcp = await connectMcp(env.mcpUrl(), env.apiKey);
  });

  afterAll(async () => {
    await mcp?.close();
    await nc?.close();
    await env?.stop();
  });

  it('stops the skill when the time runs out: acked, no reply', async () => {
    const started = Date.now();
    const { channelId, message } = await postCall('sleep', { ms: 5_000 }, { timeout_ms: 400 });
    await expect.poll(() => stoppedAtDeadline(message.id), { timeout: 4_000 }).toBe(true);
    expect(Date.now() - started).toBeLessThan(3_000);
    const { delivered } = await inbox();
    await expect.poll(async () => (await inbox()).ackFloor, { timeout: 3_000 }).toBeGreaterThanOrEqual(delivered);
    expect(await replies(channelId)).toEqual([]);
  });

  it('never starts a skill whose message arrives with no time left', async () => {
    const key = `late-${randomUUID()}`;
    const late = await postCall('counter', { key }, { timeout_ms: 0 });
    await expect.poll(() => stoppedAtDeadline(late.message.id), { timeout: 4_000 }).toBe(true);
    // The counter never ran for it: the next run counts 1.
    const next = await postCall('counter', { key });
    const waited = await rest().post(`/channels/${next.channelId}/wait`, {
      message_id: next.message.id,
      timeout_ms: 10_000,
    });
    expect(waited.reply.structured_content.count).toBe(1);
  });

  it('runs a message without a deadline to the end, as before', async () => {
    const { channelId, message } = await postCall('sleep', { ms: 700 });
    const waited = await rest().post(`/channels/${channelId}/wait`, { message_id: message.id, timeout_ms: 10_000 });
    expect(waited.status).toBe('replied');
    expect(waited.reply.content).toEqual([{ type: 'text', text: 'slept 700 ms' }]);
  });

  it('through the gateway: a call that times out stops its skill, and nobody waits past the deadline', async () => {
    const before = Date.now();
    const error = await mcp.client
      .callTool({ name: 'sleep', arguments: { ms: 5_000 }, _meta: { 'mcpgw/timeoutMs': 500 } })
      .catch((e: unknown) => e);
    const answeredAfter = Date.now() - before;
    expect((error as McpError).code).toBe(-32003);
    // Answered at the deadline: the wait was the call's time left, with no per-hop margin.
    expect(answeredAfter).toBeGreaterThanOrEqual(500);
    expect(answeredAfter).toBeLessThan(1_500);
    const started = pod()
      .logs.filter((l) => l.msg === 'skill started' && l.skill === 'sleep')
      .at(-1)!;
    await expect.poll(() => stoppedAtDeadline(started.message_id as string), { timeout: 3_000 }).toBe(true);
    expect(pod().logs.some((l) => l.msg === 'skill answered' && l.message_id === started.message_id)).toBe(false);
  });
});
