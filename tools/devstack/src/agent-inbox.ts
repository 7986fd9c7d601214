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

/** Where the inbox stream lives in a NATS cluster, as JetStream's stream info says. */
export interface InboxStreamPlacement {
  /** The `server_name` of its leader; undefined while none is elected. */
  leader?: string;
  /** Every copy's server: the leader and the replicas. */
  peers: string[];
  /** The replicas (not the leader) that are current and online. */
  currentReplicas: string[];
  /** Replicas configured (`num_replicas`). */
  replicas: number;
}

export async function inboxStreamPlacement(nc: NatsConnection, prefix: string): Promise<InboxStreamPlacement> {
  const jsm = await nc.jetstreamManager({ timeout: 2_000, checkAPI: false });
  const info = await jsm.streams.info(AgentInbox.streamName(prefix));
  const replicas = info.cluster?.replicas ?? [];
  return {
    leader: info.cluster?.leader || undefined,
    peers: [...(info.cluster?.leader ? [info.cluster.leader] : []), ...replicas.map((r) => r.name)],
    currentReplicas: replicas.filter((r) => r.current && !r.offline).map((r) => r.name),
    replicas: info.config.num_replicas,
  };
}

/** The same for an agent's durable consumer (it inherits the stream's replicas). */
export async function agentConsumerPlacement(
  nc: NatsConnection,
  prefix: string,
  agentId: string,
): Promise<{ leader?: string; peers: string[] }> {
  const jsm = await nc.jetstreamManager({ timeout: 2_000, checkAPI: false });
  const info = await jsm.consumers.info(AgentInbox.streamName(prefix), AgentInbox.consumerName(agentId));
  const leader = info.cluster?.leader || undefined;
  return { leader, peers: [...(leader ? [leader] : []), ...(info.cluster?.replicas ?? []).map((r) => r.name)] };
}
