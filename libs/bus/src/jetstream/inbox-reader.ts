import { AgentInbox, ReplicaReplies, ReplyHeaders, type InboxMessage } from '@mcpgw/contracts';
import type { Consumer, JsMsg, NatsConnection } from 'nats';
import { admit, refuseOnBus } from '../bus-edge';
import { busMeter } from '../bus-meter';
import { subjectOfShape } from '../subject-guard';
import type { BusOptions } from '../bus-options';
import { callIdsOf, traceReceive, type CallIds } from '../bus-tracing';
import { ackSubjectOf, ensureAgentConsumer, type InboxConsumerSettings } from './agent-inbox';

/** The replies subject of one message service replica. */
export type ReplicaAddress = ReturnType<typeof ReplicaReplies.exact>;

/** One chat message pulled from an agent's inbox, already checked. */
export interface InboxDelivery {
  readonly message: InboxMessage;
  readonly seq: number;
  readonly redelivered: boolean;
  readonly redeliveryCount: number;
  /** Where its reply goes: the replies subject of the replica that delivered it, if it named one. */
  readonly replyTo: ReplicaAddress | undefined;
  /** The subject that acks it; whoever holds it can ack (the replica does, for the pod). */
  readonly ackSubject: string;
  ack(): void;
  nak(delayMs?: number): void;
  /** Still working on it: JetStream restarts its ack wait. */
  working(): void;
  /** Handle it in the trace it carries, under a consumer span (bus-tracing.ts); plainly when it carries none. */
  traced<T>(work: () => Promise<T>): Promise<T>;
  /** The call's request and trace ids (from its headers), for the pod's log lines about it. */
  readonly ids: CallIds;
}

/** What JetStream says of an agent's durable consumer (consumer info). */
export interface InboxConsumerState {
  /** Messages in the stream not yet delivered to any pod. */
  pending: number;
  /** Delivered, not yet acked. */
  ackPending: number;
  /** Delivered more than once and not yet acked. */
  redelivered: number;
}

/** One pull: the checked messages, and a way to end it early. */
export interface InboxBatch extends AsyncIterable<InboxDelivery> {
  stop(): void;
}

/** An agent's durable consumer, bound. */
export interface BoundInbox {
  fetch(maxMessages: number, expiresMs: number): Promise<InboxBatch>;
  /** The consumer's counts, from JetStream (one API request: call it every few seconds at most). */
  state(): Promise<InboxConsumerState>;
}

/**
 * The pod's side of the inbox. Each pulled message is checked against the
 * inbox contract (a ChatMessage with its channel) before the pod sees it; an
 * invalid one is terminated (never redelivered), counted and logged.
 */
export class InboxReader {
  constructor(
    private readonly nc: NatsConnection,
    private readonly options: BusOptions,
  ) {}

  /** Bind (make, if need be) the agent's durable consumer. Fails with "stream not found" until the stream exists. */
  async bind(agentId: string, settings: InboxConsumerSettings): Promise<BoundInbox> {
    const durable = await ensureAgentConsumer(await this.nc.jetstreamManager(), this.options.prefix, agentId, settings);
    const consumer = await this.nc.jetstream().consumers.get(AgentInbox.streamName(this.options.prefix), durable);
    return {
      fetch: (max, expires) => fetchChecked(consumer, max, expires, this.options.prefix),
      state: async () => {
        const info = await consumer.info();
        return { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered };
      },
    };
  }
}

async function fetchChecked(
  consumer: Consumer,
  maxMessages: number,
  expiresMs: number,
  prefix: string,
): Promise<InboxBatch> {
  busMeter.listening(AgentInbox.family);
  const batch = await consumer.fetch({ max_messages: maxMessages, expires: expiresMs });
  return { stop: () => batch.stop(), [Symbol.asyncIterator]: () => checked(batch, prefix) };
}

async function* checked(batch: AsyncIterable<JsMsg>, prefix: string): AsyncGenerator<InboxDelivery> {
  for await (const msg of batch) {
    const parsed = admit(AgentInbox, msg.data, 'malformed inbox message');
    if (parsed.ok) yield new PulledMessage(parsed.value, msg, prefix);
    else msg.term();
  }
}

class PulledMessage implements InboxDelivery {
  constructor(
    readonly message: InboxMessage,
    private readonly msg: JsMsg,
    private readonly prefix: string,
  ) {}

  get seq(): number {
    return this.msg.seq;
  }
  get redelivered(): boolean {
    return this.msg.info.redelivered;
  }
  get redeliveryCount(): number {
    return this.msg.info.redeliveryCount;
  }
  /** Taken only when it is a replies subject of this agent (`<prefix>.ms.replicas.<replica>.replies.<agent>`). */
  get replyTo(): ReplicaAddress | undefined {
    if (this.checkedReplyTo === false) this.checkedReplyTo = this.readReplyTo();
    return this.checkedReplyTo;
  }
  private checkedReplyTo: ReplicaAddress | undefined | false = false;
  private readReplyTo(): ReplicaAddress | undefined {
    const subject = this.msg.headers?.get(ReplyHeaders.replyTo);
    if (!subject) return undefined;
    const shape = ReplicaReplies.subject(this.prefix, '*', this.message.agent_id);
    if (subjectOfShape(subject, shape)) return ReplicaReplies.exact(subject);
    refuseOnBus(
      AgentInbox.family,
      'inbox message with a foreign reply subject',
      `${ReplyHeaders.replyTo} is not ${shape}`,
    );
    return undefined;
  }
  get ackSubject(): string {
    return ackSubjectOf(this.msg);
  }
  ack(): void {
    this.msg.ack();
  }
  nak(delayMs?: number): void {
    this.msg.nak(delayMs);
  }
  working(): void {
    this.msg.working();
  }
  get ids(): CallIds {
    return callIdsOf(this.msg.headers);
  }
  traced<T>(work: () => Promise<T>): Promise<T> {
    return traceReceive('message', AgentInbox.family, this.msg.headers, work, this.message.id);
  }
}
