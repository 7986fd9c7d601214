import { AgentInbox } from '@mcpgw/contracts';
import type { NatsConnection } from 'nats';

/**
 * What JetStream says of an agent's inbox consumer (the one its pods share):
 * state a test can wait on instead of a pod's log line.
 */
export interface InboxState {
  /** Stream sequence of the last message handed to a pod. */
  delivered: number;
  /** Every message up to this stream sequence is acknowledged (acked or terminated). */
  ackFloor: number;
  /** Messages a pod holds and has not acknowledged yet: skills running. */
  ackPending: number;
  /** Deliveries to pods so far, redeliveries included (the consumer's sequence). */
  deliveries: number;
}

export async function agentInboxState(nc: NatsConnection, prefix: string, agentId: string): Promise<InboxState> {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.consumers.info(AgentInbox.streamName(prefix), AgentInbox.consumerName(agentId));
  return {
    delivered: info.delivered.stream_seq,
    ackFloor: info.ack_floor.stream_seq,
    ackPending: info.num_ack_pending,
    deliveries: info.delivered.consumer_seq,
  };
}

/** The id of the message at a stream sequence of the inbox (while it is there: until it is acknowledged). */
export async function inboxMessageId(nc: NatsConnection, prefix: string, seq: number): Promise<string> {
  const jsm = await nc.jetstreamManager();
  const stored = await jsm.streams.getMessage(AgentInbox.streamName(prefix), { seq });
  return (stored.json() as { id: string }).id;
}
