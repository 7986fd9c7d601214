import { scrapeCounters, startTestStack, type ServiceProcess, type TestStack } from '@mcpgw/devstack';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ACK_WAIT_MS = 1_500;
const WAIT_TIMEOUT_MS = 20_000;

/**
 * The pod answers the replica that delivered the message (see the agent pod's
 * inbox/README.md). With two replicas: a waiter on the other replica still
 * hears the reply, and a delivering replica that dies before it stores the
 * reply loses nothing: the message comes back, and the pod's stored reply goes
 * to the replica that is left.
 */
describe('replies straight to the delivering replica', () => {
  let env: TestStack;
  let replicaA: ServiceProcess;
  let replicaB: string;

  const call = async (base: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${env.stack.messageServiceToken}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  /** A sleep call posted through replica A, which delivers it: its pod will answer A. */
  const postThroughA = async (ms: number) => {
    const channel = (await call(replicaA.url!, 'POST', '/channels', { agent_id: env.agentId })).body;
    const message = {
      type: 'chat_message',
      id: randomUUID(),
      channel_id: channel.id,
      agent_id: env.agentId,
      sender: { kind: 'user', id: 'tester' },
      created_at: new Date().toISOString(),
      tool_call: { name: 'sleep', arguments: { ms } },
    };
    expect((await call(replicaA.url!, 'POST', `/channels/${channel.id}/messages`, message)).status).toBe(201);
    return { channelId: channel.id as string, messageId: message.id };
  };

  const waitOnB = (channelId: string, messageId: string) =>
    call(replicaB, 'POST', `/channels/${channelId}/wait`, { message_id: messageId, timeout_ms: WAIT_TIMEOUT_MS });

  beforeAll(async () => {
    env = await startTestStack({ podEnv: { INBOX_ACK_WAIT_MS: String(ACK_WAIT_MS) } });
    replicaA = env.stack.serving(env.messageServiceUrl);
    replicaB = (await env.stack.startMessageService()).url;
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('a waiter on the other replica is woken by the reply stored on the delivering one', async () => {
    const { channelId, messageId } = await postThroughA(1_000);
    const started = Date.now();
    const waited = await waitOnB(channelId, messageId);
    expect(waited.body).toMatchObject({ status: 'replied', reply: { in_reply_to: messageId } });
    // Woken by the reply's notice, not found by the last read at the deadline.
    expect(Date.now() - started).toBeLessThan(WAIT_TIMEOUT_MS / 2);
  });

  it('the delivering replica dies before the reply: redelivered, stored through the other, the waiter there answered', async () => {
    const pod = env.stack.processes.find((p) => p.name.startsWith('agent-pod'))!;
    const fallbacksBefore = (await scrapeCounters(pod.managementUrl!)).bus.get('out ms.agents.*.replies') ?? 0;
    const { channelId, messageId } = await postThroughA(1_000);
    const waiting = waitOnB(channelId, messageId);
    await replicaA.kill(); // sudden: it never stores the reply nor acks the message
    const started = Date.now();
    const waited = await waiting;
    expect(waited.body).toMatchObject({ status: 'replied', reply: { in_reply_to: messageId } });
    expect(Date.now() - started).toBeLessThan(WAIT_TIMEOUT_MS / 2);
    // The pod stored its reply by request to the queue group, the fallback after a redelivery.
    const fallbacks = (await scrapeCounters(pod.managementUrl!)).bus.get('out ms.agents.*.replies') ?? 0;
    expect(fallbacks).toBeGreaterThan(fallbacksBefore);
  });
});
