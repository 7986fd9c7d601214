import type { NatsConnection } from 'nats';

export type BusDirection = 'out' | 'in';

/**
 * Counts of NATS messages this process published (`out`) and was delivered
 * (`in`), per subject family: the figure that says what a call costs on the
 * bus. One meter per process, since an app holds one bus connection.
 */
export class BusMeter {
  /** Per direction, per family: no key string is built per message. */
  private readonly counts: Record<BusDirection, Map<string, number>> = { out: new Map(), in: new Map() };
  private readonly drops = new Map<string, number>();

  count(direction: BusDirection, family: string): void {
    const counts = this.counts[direction];
    counts.set(family, (counts.get(family) ?? 0) + 1);
  }

  /**
   * A family this process listens on: its drop counter is on /metrics at 0 from now on.
   * A counter that appears only at its first drop starts at 1, and Prometheus's
   * `increase()` sees no increase in that, so the first drop would never alert.
   */
  listening(family: string): void {
    if (!this.drops.has(family)) this.drops.set(family, 0);
  }

  /** A received payload that failed its subject's check and was dropped. */
  drop(family: string): void {
    this.drops.set(family, (this.drops.get(family) ?? 0) + 1);
  }

  *dropped(): Iterable<[{ family: string }, number]> {
    for (const [family, value] of this.drops) yield [{ family }, value];
  }

  /** `[labels, count]` pairs, for /metrics. */
  *entries(): Iterable<[{ direction: string; family: string }, number]> {
    for (const direction of ['out', 'in'] as const)
      for (const [family, value] of this.counts[direction]) yield [{ direction, family }, value];
  }
}

export const busMeter = new BusMeter();

/** The Prometheus counter `mcpgw_bus_messages_total`, read from the process's meter. */
export const busMessagesMetric = {
  name: 'mcpgw_bus_messages_total',
  help: 'NATS messages published (out) and delivered (in) by this process, per subject family',
  labelNames: ['direction', 'family'] as const,
  read: () => busMeter.entries(),
};

/** The Prometheus counter `mcpgw_bus_dropped_total`: payloads refused at the edge. */
export const busDroppedMetric = {
  name: 'mcpgw_bus_dropped_total',
  help: 'Messages received from the bus whose payload failed its contract check and were dropped, per subject family',
  labelNames: ['family'] as const,
  read: () => busMeter.dropped(),
};

/**
 * The family of a subject: per-entity tokens (agent, message, replica ids)
 * folded to `*`, so the label set stays small. `reply` is any `_INBOX` subject.
 */
export function subjectFamily(subject: string, prefix: string): string {
  if (subject.startsWith('_INBOX.')) return 'reply';
  if (subject.startsWith('$JS.ACK.')) return 'js.ack';
  if (subject.startsWith('$JS.API.CONSUMER.MSG.NEXT.')) return 'js.pull';
  if (subject.startsWith('$JS.')) return 'js.api';
  if (!subject.startsWith(`${prefix}.`)) return 'other';
  const tokens = subject.slice(prefix.length + 1).split('.');
  // agents.<agent>.inbox, calls.<message>.stored, calls.<agent>.<message>.events,
  // ms.replicas.<replica>.replies.<agent>, ms.agents.<agent>.replies, registry.agents.<agent>.register,
  // gateway.agents.<agent>.notices
  if (tokens[0] === 'agents' || tokens[0] === 'calls') tokens[1] = '*';
  if (tokens[0] === 'calls' && tokens.length === 4) tokens[2] = '*';
  if (tokens[0] === 'ms' && tokens[1] === 'replicas') {
    tokens[2] = '*';
    if (tokens.length === 5) tokens[4] = '*';
  }
  if ((tokens[0] === 'ms' || tokens[0] === 'registry' || tokens[0] === 'gateway') && tokens[1] === 'agents')
    if (tokens.length === 4) tokens[2] = '*';
  return tokens.join('.');
}

/** The parts of nats.js's protocol handler that every message passes through. */
interface ProtocolHandler {
  publish(subject: string, payload?: unknown, options?: unknown): void;
  processMsg(msg: { subject: Uint8Array }, data: Uint8Array): void;
}

/**
 * Count every message of a connection. nats.js sends and receives every
 * message (requests, replies, JetStream publishes, acks and pulls) through one
 * protocol handler; wrapping its two methods is the only place that sees them
 * all. Tied to nats 2.29 (pinned): a test fails if the internals move.
 */
export function meterConnection(nc: NatsConnection, prefix: string, meter: BusMeter = busMeter): void {
  const protocol = (nc as unknown as { protocol?: ProtocolHandler }).protocol;
  if (!protocol || typeof protocol.publish !== 'function' || typeof protocol.processMsg !== 'function') {
    throw new Error('nats client internals changed: cannot meter the bus connection');
  }
  const publish = protocol.publish.bind(protocol);
  const processMsg = protocol.processMsg.bind(protocol);
  protocol.publish = (subject, payload, options) => {
    meter.count('out', subjectFamily(subject, prefix));
    return publish(subject, payload, options);
  };
  protocol.processMsg = (msg, data) => {
    meter.count('in', isInboxSubject(msg.subject) ? 'reply' : subjectFamily(latin1(msg.subject), prefix));
    return processMsg(msg, data);
  };
}

/** `_INBOX.`, as bytes: most deliveries are replies, told apart without decoding their subject. */
const INBOX = Buffer.from('_INBOX.', 'latin1');

function isInboxSubject(subject: Uint8Array): boolean {
  if (subject.byteLength < INBOX.length) return false;
  for (let i = 0; i < INBOX.length; i++) if (subject[i] !== INBOX[i]) return false;
  return true;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
