import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AgentInbox, ReplyHeaders, UnavailableError, type ChatMessage } from '@mcpgw/contracts';
import { BUS_OPTIONS, NATS_CONNECTION, encodeJson, ensureInboxStream, type BusOptions } from '@mcpgw/bus';
import { headers, type JetStreamClient, type NatsConnection } from 'nats';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { REPLICA_REPLIES_SUBJECT } from '../replies/replica-replies.subject';

/**
 * Hands stored chat messages to agent pods through JetStream: at-least-once,
 * de-duplicated by message id (a retried post publishes the same `msgID`).
 * Each message names this replica's replies subject, where its pod answers.
 */
@Injectable()
export class AgentDeliveryService implements OnModuleInit {
  private js!: JetStreamClient;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
    @Inject(REPLICA_REPLIES_SUBJECT) private readonly repliesSubject: string,
  ) {}

  async onModuleInit(): Promise<void> {
    await ensureInboxStream(this.nc, this.bus.prefix, this.env.INBOX_STORAGE);
    this.js = this.nc.jetstream();
  }

  async deliver(message: ChatMessage): Promise<void> {
    const hdrs = headers();
    hdrs.set(ReplyHeaders.replyTo, this.repliesSubject);
    try {
      await this.js.publish(AgentInbox.subject(this.bus.prefix, message.agent_id), encodeJson(message), {
        msgID: message.id,
        headers: hdrs,
      });
    } catch (error) {
      throw new UnavailableError(`could not hand the message to agent ${message.agent_id}: ${(error as Error).message}`);
    }
  }
}
