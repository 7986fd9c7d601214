import { AgentInbox } from '@mcpgw/contracts';
import {
  AckPolicy,
  DeliverPolicy,
  ErrorCode,
  RetentionPolicy,
  StorageType,
  connect,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import { natsServers } from '../servers';

export interface InboxConsumerSettings {
  /** How long a pod may hold a message without acking or signalling progress. */
  ackWaitMs: number;
  /** Deliveries before JetStream gives up on a message. */
  maxDeliver: number;
}

const NANOS_PER_MS = 1_000_000;

export type InboxStorage = 'file' | 'memory';

/** How the message service keeps the inbox stream (INBOX_STORAGE, INBOX_REPLICAS). */
export interface InboxStreamSettings {
  storage: InboxStorage;
  /**
   * Copies of the stream on as many NATS servers of a cluster (1 to 5; 3 survives
   * the loss of one server). The agents' consumers are made without a replica
   * count of their own, so they inherit it, and follow it when it changes.
   */
  replicas: number;
}

const SINGLE_NODE: InboxStreamSettings = { storage: 'file', replicas: 1 };

/**
 * Ten minutes: as long as the longest wait, so a message re-posted by a retry
 * while its first delivery is still pending is not delivered twice.
 */
const DUPLICATE_WINDOW_MS = 600_000;

/**
 * The stream of agent inboxes: a work queue (a message leaves when acked), with
 * de-duplication by message id over DUPLICATE_WINDOW_MS. File storage survives a NATS
 * restart; memory storage is faster and survives everything but that. Nobody
 * may purge it or delete messages from it through the API (`deny_purge`,
 * `deny_delete`, set again on a stream made before them): pending calls leave
 * only when a pod acks them or they expire. The storage and replica count are
 * reconciled the same way: a stream made with one replica is raised to
 * `replicas` by the update (JetStream copies it to the new peers, and moves the
 * durable consumers with it).
 */
export async function ensureInboxStream(
  nc: NatsConnection,
  prefix: string,
  settings: InboxStreamSettings = SINGLE_NODE,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await reconcileInboxStream(nc, prefix, settings);
    } catch (error) {
      if ((error as { code?: string }).code !== ErrorCode.Timeout || attempt === ENSURE_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
}

/**
 * Tries at making or reconciling the stream when JetStream's API does not answer in time.
 * Message services started together on a cluster (a Deployment's replicas) ask at once: on
 * nats-server 2.9 with three servers, one replica's add of a replicated stream and another's
 * update of it both went unanswered past the API's 5 s, every time, and both services failed
 * to start. Asked again, the stream is there and the update answers
 * (`apps/gateway/test/nats-cluster.e2e.spec.ts`, "started together").
 */
const ENSURE_ATTEMPTS = 4;

async function reconcileInboxStream(nc: NatsConnection, prefix: string, settings: InboxStreamSettings): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const name = AgentInbox.streamName(prefix);
  const config = {
    name,
    subjects: [AgentInbox.wildcard(prefix)],
    retention: RetentionPolicy.Workqueue,
    storage: settings.storage === 'memory' ? StorageType.Memory : StorageType.File,
    num_replicas: settings.replicas,
    duplicate_window: DUPLICATE_WINDOW_MS * NANOS_PER_MS,
    max_age: 24 * 3600_000 * NANOS_PER_MS,
    deny_purge: true,
    deny_delete: true,
  };
  try {
    await jsm.streams.info(name);
    await jsm.streams.update(name, config);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await addIgnoringRace(() => jsm.streams.add(config));
  }
}

/** Make the stream if it is gone (lost with a NATS server, deleted); leave it alone if it is there. */
export async function restoreInboxStream(
  nc: NatsConnection,
  prefix: string,
  settings: InboxStreamSettings = SINGLE_NODE,
): Promise<boolean> {
  const jsm = await nc.jetstreamManager();
  try {
    await jsm.streams.info(AgentInbox.streamName(prefix));
    return false;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await ensureInboxStream(nc, prefix, settings);
    return true;
  }
}

/**
 * Whether the inbox stream takes writes now, in the words of `/ready`: nothing
 * when it does; `no stream leader` while a cluster elects one; `no quorum` when
 * its leader hears from too few of its replicas to commit a message (a leader
 * that lost its quorum still calls itself leader for a while: nats-server 2.9
 * marks the silent replicas not current after about 10 s and steps down after
 * about 20 s); `no inbox stream` when it is gone; `unavailable` when JetStream
 * does not answer within `timeoutMs`.
 */
export async function inboxStreamWritable(
  nc: NatsConnection,
  prefix: string,
  timeoutMs = 1_500,
): Promise<string | undefined> {
  try {
    const jsm = await nc.jetstreamManager({ timeout: timeoutMs, checkAPI: false });
    const info = await jsm.streams.info(AgentInbox.streamName(prefix));
    const cluster = info.cluster;
    if (!cluster?.replicas?.length) return cluster && !cluster.leader ? 'no stream leader' : undefined;
    if (!cluster.leader) return 'no stream leader';
    const heard = 1 + cluster.replicas.filter((replica) => replica.current && !replica.offline).length;
    return heard > (1 + cluster.replicas.length) / 2 ? undefined : 'no quorum';
  } catch (error) {
    return isNotFound(error) ? 'no inbox stream' : 'unavailable';
  }
}

/** The inbox stream as JetStream reports it, for /metrics (the message service's `inbox-stream-metrics.ts`). */
export interface InboxStreamState {
  stream: string;
  /** Copies asked for (`num_replicas`). */
  replicas: number;
  /** Copies that hold the stream now: the leader, and the replicas that are current and online. */
  current: number;
  /** Whether the stream has a leader (a single server is its own). */
  leader: boolean;
  /** Each agent's consumer: messages not yet delivered, delivered and not acked, pull requests waiting. */
  consumers: { agent: string; pending: number; ackPending: number; waiting: number }[];
}

/** Stream info and the consumers' counts, one API request each (the consumer list is paged by 256). */
export async function inboxStreamState(
  nc: NatsConnection,
  prefix: string,
  timeoutMs = 1_500,
): Promise<InboxStreamState | undefined> {
  try {
    const jsm = await nc.jetstreamManager({ timeout: timeoutMs, checkAPI: false });
    const stream = AgentInbox.streamName(prefix);
    const info = await jsm.streams.info(stream);
    const cluster = info.cluster;
    const replicas = cluster?.replicas ?? [];
    const leader = !cluster || !!cluster.leader;
    const current = (leader ? 1 : 0) + replicas.filter((r) => r.current && !r.offline).length;
    const consumers: InboxStreamState['consumers'] = [];
    for await (const consumer of jsm.consumers.list(stream)) {
      if (!consumer.name.startsWith('agent_')) continue;
      consumers.push({
        agent: consumer.name.slice('agent_'.length),
        pending: consumer.num_pending,
        ackPending: consumer.num_ack_pending,
        waiting: consumer.num_waiting,
      });
    }
    return { stream, replicas: info.config.num_replicas, current, leader, consumers };
  } catch {
    return undefined;
  }
}

/** The durable consumer that all pods of one agent pull from. */
export async function ensureAgentConsumer(
  jsm: JetStreamManager,
  prefix: string,
  agentId: string,
  settings: InboxConsumerSettings,
): Promise<string> {
  const stream = AgentInbox.streamName(prefix);
  const durable = AgentInbox.consumerName(agentId);
  const config = {
    durable_name: durable,
    filter_subject: AgentInbox.subject(prefix, agentId),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: settings.ackWaitMs * NANOS_PER_MS,
    max_deliver: settings.maxDeliver,
  };
  try {
    await jsm.consumers.info(stream, durable);
    await jsm.consumers.update(stream, durable, {
      ack_wait: config.ack_wait,
      max_deliver: config.max_deliver,
    });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await addIgnoringRace(() => jsm.consumers.add(stream, config));
  }
  return durable;
}

/**
 * The subject that acks a delivered message (its reply subject). Anyone who
 * holds it can ack: a message service replica acks for the pod once it has
 * stored the pod's reply. nats.js has it on the message but not in the JsMsg type.
 */
export function ackSubjectOf(msg: JsMsg): string {
  return (msg as unknown as { reply: string }).reply;
}

/**
 * The shape of an ack subject of one agent's consumer, as nats-server 2.9
 * makes them: `$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer
 * seq>.<time>.<pending>`. A message service acks for a pod only on a subject
 * of this shape (checked with `subjectOfShape`), never on one a reply names
 * otherwise: a space in it would add arguments to the PUB line, and another
 * consumer's ack would drop another agent's work. The agent's own
 * permissions grant exactly this prefix (auth/permissions.ts).
 */
export function ackSubjectShape(prefix: string, agentId: string): string {
  return `$JS.ACK.${AgentInbox.streamName(prefix)}.${AgentInbox.consumerName(agentId)}.*.*.*.*.*`;
}

/** Remove a deployment's stream (tests clean up with this). */
export async function deleteInboxStream(nc: NatsConnection, prefix: string): Promise<void> {
  const jsm = await nc.jetstreamManager();
  await jsm.streams.delete(AgentInbox.streamName(prefix)).catch(() => undefined);
}

/** The same, on a connection of its own to `url` (tools that hold none). */
export async function removeInboxStream(url: string, prefix: string): Promise<void> {
  const nc = await connect({ servers: natsServers(url) });
  try {
    await deleteInboxStream(nc, prefix);
  } finally {
    await nc.close();
  }
}

function isNotFound(error: unknown): boolean {
  return /not found/i.test((error as Error).message ?? '');
}

/** Two replicas may create the same stream at once; the loser's "already in use" is fine. */
async function addIgnoringRace(add: () => Promise<unknown>): Promise<void> {
  try {
    await add();
  } catch (error) {
    if (!/already in use|already exists/i.test((error as Error).message ?? '')) throw error;
  }
}
