import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AgentInbox, ReplyHeaders, UnavailableError, type ChatMessage } from '@mcpgw/contracts';
import { BUS_OPTIONS, NATS_CONNECTION, encodeJson, ensureInboxStream, type BusOptions } from '@mcpgw/bus';
import { headers, type NatsConnection } from 'nats';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { REPLICA_REPLIES_SUBJECT } from '../replies/replica-replies.subject';

/** JetStream de-duplicates on this header within the stream's window. */
const MSG_ID_HEADER = 'Nats-Msg-Id';

/**
 * Hands stored chat messages to agent pods through JetStream: at-least-once,
 * de-duplicated by message id (a retried post publishes the same id). Each
 * message names this replica's replies subject, where its pod answers.
 *
 * The publish does not wait for JetStream's ack: the message is already
 * durable in PostgreSQL, and the caller waits for the reply anyway. A publish
 * JetStream never took shows as a reply timeout; a retry of the call posts the
 * same message again, which delivers it again (see MessagesService).
 */
@Injectable()
export class AgentDeliveryService implements OnModuleInit {
  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
    @Inject(REPLICA_REPLIES_SUBJECT) private readonly repliesSubject: string,
  ) {}

  async onModuleInit(): Promise<void> {
    await ensureInboxStream(this.nc, this.bus.prefix, this.env.INBOX_STORAGE);
  }

  deliver(message: ChatMessage): void {
    const hdrs = headers();
    hdrs.set(MSG_ID_HEADER, message.id);
    hdrs.set(ReplyHeaders.replyTo, this.repliesSubject);
    try {
      this.nc.publish(AgentInbox.subject(this.bus.prefix, message.agent_id), encodeJson(message), { headers: hdrs });
    } catch (error) {
      throw new UnavailableError(`could not hand the message to agent ${message.agent_id}: ${(error as Error).message}`);
    }
  }
}
