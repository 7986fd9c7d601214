import { AgentInbox } from '@mcpgw/contracts';
import { encodeJson } from '@mcpgw/bus';
import { agentInboxState, messageServiceRest, startTestStack, toolCallMessage, type TestStack } from '@mcpgw/devstack';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** A message that reaches a pod twice (a retried publish past JetStream's de-dup) runs once. */
describe('duplicate message ids', () => {
  let env: TestStack;
  let nc: NatsConnection;

  /** Every inbox message up to this stream sequence is acknowledged (acked or terminated) by a pod. */
  const acknowledged = async () => (await agentInboxState(nc, env.stack.settings.busPrefix, env.agentId)).ackFloor;

  /** The message service's REST mirror. */
  const post = (path: string, body: unknown) =>
    messageServiceRest(() => env.messageServiceUrl, env.stack.messageServiceToken).post(path, body);

  beforeAll(async () => {
    env = await startTestStack({ pods: 1, podEnv: { LOG_LEVEL: 'debug' } });
    nc = await env.connectNats();
  });

  afterAll(async () => {
    await nc?.close();
    await env?.stop();
  });

  it('the pod runs the skill once and acknowledges the copy', async () => {
    const channel = await post('/channels', { agent_id: env.agentId });
    const message = toolCallMessage(channel.id, env.agentId, 'counter', { key: 'dup' });
    await post(`/channels/${channel.id}/messages`, message);
    const waited = await post(`/channels/${channel.id}/wait`, { message_id: message.id, timeout_ms: 10_000 });
    expect(waited.status).toBe('replied');

    // The same envelope again, under another JetStream msgID, so only the pod can catch it.
    const js = nc.jetstream();
    const subject = AgentInbox.subject(env.stack.settings.busPrefix, env.agentId);
    const copy = await js.publish(subject, encodeJson(message), { msgID: `${message.id}-retry` });

    const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
    await expect.poll(acknowledged, { timeout: 10_000 }).toBeGreaterThanOrEqual(copy.seq);
    const runs = pod.logs.filter((l) => l.msg === 'skill started' && l.message_id === message.id);
    expect(runs).toHaveLength(1);
  });

  it('a copy that arrives while the first still runs waits for it, then is acknowledged without a second run', async () => {
    const channel = await post('/channels', { agent_id: env.agentId });
    const message = toolCallMessage(channel.id, env.agentId, 'sleep', { ms: 1_500 });
    await post(`/channels/${channel.id}/messages`, message);
    const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
    const runs = () => pod.logs.filter((l) => l.msg === 'skill started' && l.message_id === message.id);
    await expect.poll(() => runs().length, { timeout: 10_000 }).toBe(1);

    // Published while the skill runs: dropped unacked, it would wait out the pod's 30 s ack wait.
    const js = nc.jetstream();
    const subject = AgentInbox.subject(env.stack.settings.busPrefix, env.agentId);
    const copy = await js.publish(subject, encodeJson(message), { msgID: `${message.id}-retry` });
    await expect.poll(acknowledged, { timeout: 10_000 }).toBeGreaterThanOrEqual(copy.seq);
    expect(runs()).toHaveLength(1);
    expect(pod.logs.some((l) => l.msg === 'duplicate dropped' && l.message_id === message.id)).toBe(true);
  });

  it('survives an inbox message that is not JSON, and keeps answering', async () => {
    const js = nc.jetstream();
    const subject = AgentInbox.subject(env.stack.settings.busPrefix, env.agentId);
    const garbage = await js.publish(subject, new TextEncoder().encode('{not json'), {
      msgID: `garbage-${Date.now()}`,
    });
    const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
    await expect.poll(acknowledged, { timeout: 10_000 }).toBeGreaterThanOrEqual(garbage.seq);
    expect(pod.running).toBe(true);
    const channel = await post('/channels', { agent_id: env.agentId });
    const echo = toolCallMessage(channel.id, env.agentId, 'echo', { text: 'still here' });
    await post(`/channels/${channel.id}/messages`, echo);
    const waited = await post(`/channels/${channel.id}/wait`, { message_id: echo.id, timeout_ms: 10_000 });
    expect(waited).toMatchObject({ status: 'replied', reply: { content: [{ text: 'still here' }] } });
    expect(pod.running).toBe(true);
  });
});
