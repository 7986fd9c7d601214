import { AgentInbox, ReplicaReplies, ReplyHeaders, type ChatMessage } from '@mcpgw/contracts';
import { toolCallMessage, type ServiceProcess } from '@mcpgw/devstack';
import { headers, type Msg } from 'nats';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInboxStand, type InboxStand } from './support/inbox-stand';

/** Long, so that an ack before it can only be the pod's own, not a redelivery's. */
const ACK_WAIT_MS = 60_000;

/**
 * A first delivery's reply goes straight to the replica that delivered the
 * message, which stores it and acks for the pod. When that reply is lost (the
 * pod's NATS server killed as it went out, or the replica dead), nothing is
 * stored and nothing acked: after the ack wait the message would go to any pod,
 * and one that never ran the skill would run it again (the cluster e2e caught a
 * `counter` key run on two pods after a leader kill). The replica answers the
 * reply once it is stored and acked; without that answer the pod stores the
 * reply at any replica and acks itself, long before the ack wait.
 *
 * The test makes the delivering replica a black hole: it puts the message on
 * the inbox itself, naming a replies subject of a replica that does not exist,
 * on which it only listens, then posts the same message (same id: JetStream
 * keeps the first copy) to the message service so that it is stored.
 */
describe('a first-delivery reply the delivering replica never confirms', () => {
  let stand: InboxStand;
  let pod: ServiceProcess;
  const heardByTheBlackHole: Msg[] = [];
  let message: ChatMessage;
  let seq = 0;
  const post = (path: string, body: unknown) => stand.rest.post(path, body);

  beforeAll(async () => {
    stand = await startInboxStand(ACK_WAIT_MS);
    const { env, nc, prefix } = stand;
    const blackHole = ReplicaReplies.subject(prefix, 'gone-replica', env.agentId);
    nc.subscribe(blackHole, { callback: (_error, msg) => heardByTheBlackHole.push(msg) });
    await nc.flush();

    const channel = await post('/channels', { agent_id: env.agentId });
    message = toolCallMessage(channel.id, env.agentId, 'counter', { key: randomUUID() });
    const hdrs = headers();
    hdrs.set('Nats-Msg-Id', message.id);
    hdrs.set(ReplyHeaders.replyTo, blackHole);
    seq = (
      await nc.jetstream().publish(AgentInbox.subject(prefix, env.agentId), JSON.stringify(message), { headers: hdrs })
    ).seq;
    await post(`/channels/${channel.id}/messages`, message);

    pod = await env.stack.startPod({ POD_ID: 'only-pod', LOG_LEVEL: 'debug', INBOX_ACK_WAIT_MS: String(ACK_WAIT_MS) });
  });

  afterAll(async () => {
    await stand?.stop();
  });

  it('is stored by the pod at any replica and acked by the pod, long before the ack wait, with one run', async () => {
    await expect.poll(stand.acknowledged, { timeout: 20_000, interval: 200 }).toBeGreaterThanOrEqual(seq);

    // The reply went to the black hole first, as a request carrying the delivery's ack subject.
    expect(heardByTheBlackHole).toHaveLength(1);
    expect(heardByTheBlackHole[0].reply).toBeTruthy();
    expect(heardByTheBlackHole[0].headers?.get(ReplyHeaders.ack)).toMatch(/^\$JS\.ACK\./);
    expect(pod.logs.some((l) => /did not confirm the reply/.test(String(l.msg)) && l.message_id === message.id)).toBe(
      true,
    );

    const waited = await post(`/channels/${message.channel_id}/wait`, { message_id: message.id, timeout_ms: 1_000 });
    expect(waited).toMatchObject({ status: 'replied', reply: { meta: { pod_id: 'only-pod' } } });
    expect(stand.skillRuns(message.id)).toHaveLength(1);
  });
});
