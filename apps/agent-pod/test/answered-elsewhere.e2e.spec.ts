import { AgentInbox, type AgentReply, type ChatMessage } from '@mcpgw/contracts';
import { toolCallMessage, type ServiceProcess } from '@mcpgw/devstack';
import type { JsMsg } from 'nats';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInboxStand, type InboxStand } from './support/inbox-stand';

const ACK_WAIT_MS = 1_500;

/**
 * A message answered on one pod whose ack was lost (the inbox stream's leader
 * killed as the replica acked it) comes back after the ack wait, maybe to
 * another pod, which never ran it. That pod asks the message service whether a
 * reply is stored and acks instead of running the skill a second time. The test
 * plays the first pod: it pulls the message from the agent's consumer, stores a
 * reply, and never acks.
 */
describe('a redelivery answered on another pod', () => {
  let stand: InboxStand;
  const post = (path: string, body: unknown) => stand.rest.post(path, body);

  /** A `counter` call posted to the agent's inbox, and its first delivery, taken by the test and never acked. */
  const deliveredOnce = async (): Promise<{ message: ChatMessage; first: JsMsg }> => {
    const channel = await post('/channels', { agent_id: stand.env.agentId });
    const message = toolCallMessage(channel.id, stand.env.agentId, 'counter', { key: randomUUID() });
    await post(`/channels/${channel.id}/messages`, message);
    const consumer = await stand.nc
      .jetstream()
      .consumers.get(AgentInbox.streamName(stand.prefix), AgentInbox.consumerName(stand.env.agentId));
    const first = await consumer.next({ expires: 5_000 });
    expect(first?.info.redeliveryCount).toBe(1);
    return { message, first: first! };
  };

  let answered: { message: ChatMessage; first: JsMsg };
  let unanswered: { message: ChatMessage; first: JsMsg };
  let pod: ServiceProcess;

  beforeAll(async () => {
    stand = await startInboxStand(ACK_WAIT_MS);
    // Both taken before any pod runs; only the first gets a reply, as if from the pod that took it.
    answered = await deliveredOnce();
    unanswered = await deliveredOnce();
    const { message } = answered;
    const reply: AgentReply = {
      type: 'agent_reply',
      id: randomUUID(),
      channel_id: message.channel_id!,
      agent_id: stand.env.agentId,
      in_reply_to: message.id,
      created_at: new Date().toISOString(),
      content: [{ type: 'text', text: 'answered by the first pod' }],
      meta: { pod_id: 'first-pod' },
    };
    await post(`/channels/${message.channel_id}/messages`, reply);
    pod = await stand.env.stack.startPod({
      POD_ID: 'second-pod',
      LOG_LEVEL: 'debug',
      INBOX_ACK_WAIT_MS: String(ACK_WAIT_MS),
    });
  });

  afterAll(async () => {
    await stand?.stop();
  });

  it('is acked by the pod that gets it, without running the skill; the caller gets the stored reply', async () => {
    const { message, first } = answered;
    await expect.poll(stand.acknowledged, { timeout: 15_000 }).toBeGreaterThanOrEqual(first.seq);
    expect(stand.skillRuns(message.id)).toHaveLength(0);
    expect(pod.logs.some((l) => /answered elsewhere/.test(String(l.msg)) && l.message_id === message.id)).toBe(true);
    const waited = await post(`/channels/${message.channel_id}/wait`, { message_id: message.id, timeout_ms: 1_000 });
    expect(waited).toMatchObject({ status: 'replied', reply: { content: [{ text: 'answered by the first pod' }] } });
  });

  it('a redelivery nobody answered runs, once', async () => {
    const { message, first } = unanswered;
    await expect.poll(stand.acknowledged, { timeout: 15_000 }).toBeGreaterThanOrEqual(first.seq);
    const waited = await post(`/channels/${message.channel_id}/wait`, { message_id: message.id, timeout_ms: 5_000 });
    expect(waited).toMatchObject({ status: 'replied', reply: { meta: { pod_id: 'second-pod' } } });
    expect(stand.skillRuns(message.id)).toHaveLength(1);
  });
});
