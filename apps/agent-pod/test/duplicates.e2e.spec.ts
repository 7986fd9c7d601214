import { AgentInbox, type ChatMessage } from '@mcpgw/contracts';
import { encodeJson } from '@mcpgw/bus';
import { agentInboxState, startTestStack, type TestStack } from '@mcpgw/devstack';
import type { NatsConnection } from 'nats';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** A message that reaches a pod twice (a retried publish past JetStream's de-dup) runs once. */
describe('duplicate message ids', () => {
  let env: TestStack;
  let nc: NatsConnection;

  /** Every inbox message up to this stream sequence is acknowledged (acked or terminated) by a pod. */
  const acknowledged = async () => (await agentInboxState(nc, env.stack.settings.busPrefix, env.agentId)).ackFloor;

  /** The message service's REST mirror. */
  const post = (path: string, body: unknown) =>
    fetch(`${env.messageServiceUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${env.stack.messageServiceToken}` },
      body: JSON.stringify(body),
    }).then((r) => r.json());

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
    const message: ChatMessage = {
      type: 'chat_message',
      id: randomUUID(),
      channel_id: channel.id,
      agent_id: env.agentId,
      sender: { kind: 'user', id: 'test' },
      created_at: new Date().toISOString(),
      tool_call: { name: 'counter', arguments: { key: 'dup' } },
    };
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
    const id = randomUUID();
    await post(`/channels/${channel.id}/messages`, {
      type: 'chat_message',
      id,
      agent_id: env.agentId,
      sender: { kind: 'user', id: 'test' },
      created_at: new Date().toISOString(),
      tool_call: { name: 'echo', arguments: { text: 'still here' } },
    });
    const waited = await post(`/channels/${channel.id}/wait`, { message_id: id, timeout_ms: 10_000 });
    expect(waited).toMatchObject({ status: 'replied', reply: { content: [{ text: 'still here' }] } });
    expect(pod.running).toBe(true);
  });
});
