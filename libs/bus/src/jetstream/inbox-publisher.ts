import { Inject, Injectable } from '@nestjs/common';
import { AgentInbox, ReplyHeaders, type InboxMessage } from '@mcpgw/contracts';
import { headers, type JetStreamClient, type MsgHdrs, type NatsConnection } from 'nats';
import { BUS_OPTIONS, NATS_CONNECTION, type BusOptions } from '../bus-options';
import { traceSend, withRequestId } from '../bus-tracing';
import { encodeJson } from '../json';
import {
  ensureInboxStream,
  inboxStreamState,
  inboxStreamWritable,
  restoreInboxStream,
  type InboxStreamSettings,
  type InboxStreamState,
} from './agent-inbox';
import { watchInboxStream, type InboxTamperingEvent } from './inbox-watch';

/** JetStream de-duplicates on this header within the stream's window. */
const MSG_ID_HEADER = 'Nats-Msg-Id';

/** JetStream's positive acknowledgement. */
const ACK = new TextEncoder().encode('+ACK');
/** "Still working on it": the message's ack wait starts again. */
const WORKING = new TextEncoder().encode('+WPI');

/**
 * The message service's side of the agent inboxes: the stream, and chat
 * messages into it, each naming where its reply goes (`Mcpgw-Reply-To`) and
 * de-duplicated by message id, with the trace context when a trace is active
 * (bus-tracing.ts). Our own service writes here, so nothing is
 * checked on the way in; the pod checks what it pulls.
 */
@Injectable()
export class InboxPublisher {
  private js?: JetStreamClient;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly options: BusOptions,
  ) {}

  ensureStream(settings: InboxStreamSettings): Promise<void> {
    return ensureInboxStream(this.nc, this.options.prefix, settings);
  }

  /** Make the stream again if it is gone; true when it had to. */
  restoreStream(settings: InboxStreamSettings): Promise<boolean> {
    return restoreInboxStream(this.nc, this.options.prefix, settings);
  }

  /**
   * The `jetstream` check of `/ready`: the inbox stream takes writes (it has a
   * leader). A connection to NATS can be up while the stream cannot take a
   * message: its cluster is electing a leader, or lost its quorum.
   */
  readiness(): { name: string; check(): Promise<string | void> } {
    return { name: 'jetstream', check: () => inboxStreamWritable(this.nc, this.options.prefix) };
  }

  /** The stream's replicas, leader and consumers' counts (undefined when JetStream does not answer). */
  state(): Promise<InboxStreamState | undefined> {
    return inboxStreamState(this.nc, this.options.prefix);
  }

  /** Watch the stream for purges, deletes and consumers that are not agents' own (inbox-watch.ts). */
  watch(onTampering: (event: InboxTamperingEvent) => void): Promise<() => void> {
    return watchInboxStream(this.nc, this.options.prefix, onTampering);
  }

  /** Resolves once JetStream has the message (its ack). */
  async deliver(message: InboxMessage, replyTo: string, requestId?: string): Promise<void> {
    this.js ??= this.nc.jetstream();
    const hdrs = inboxHeaders(message, replyTo, requestId);
    const traced = traceSend('publish', AgentInbox.family, hdrs, message.id);
    try {
      await this.js.publish(this.subject(message), encodeJson(message), { headers: hdrs });
    } catch (error) {
      traced?.end(error);
      throw error;
    }
    traced?.end();
  }

  /** The same message, without waiting for JetStream's ack: one message fewer, for a caller that waits for the reply anyway. */
  deliverUnconfirmed(message: InboxMessage, replyTo: string, requestId?: string): void {
    const hdrs = inboxHeaders(message, replyTo, requestId);
    const traced = traceSend('publish', AgentInbox.family, hdrs, message.id);
    this.nc.publish(this.subject(message), encodeJson(message), { headers: hdrs });
    traced?.end();
  }

  /** Ack an inbox message for the pod that answered it (its ack subject came in `Mcpgw-Ack`). */
  ackFor(ackSubject: string): void {
    this.nc.publish(ackSubject, ACK);
  }

  /** Hold an inbox message for the pod that answered it while its reply waits to be stored (no redelivery meanwhile). */
  workingFor(ackSubject: string): void {
    this.nc.publish(ackSubject, WORKING);
  }

  private subject(message: InboxMessage): string {
    return AgentInbox.subject(this.options.prefix, message.agent_id);
  }
}

/**
 * The de-duplication id (JetStream drops a second copy within its window), where to
 * reply, and the id of the HTTP request that made the call (for the pod's log lines).
 */
function inboxHeaders(message: InboxMessage, replyTo: string, requestId?: string): MsgHdrs {
  const hdrs = headers();
  hdrs.set(MSG_ID_HEADER, message.id);
  hdrs.set(ReplyHeaders.replyTo, replyTo);
  withRequestId(hdrs, requestId);
  return hdrs;
}
