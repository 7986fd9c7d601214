import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AgentInbox, UnavailableError, type ChatMessage } from '@mcpgw/contracts';
import { BUS_OPTIONS, NATS_CONNECTION, encodeJson, ensureInboxStream, type BusOptions } from '@mcpgw/bus';
import type { JetStreamClient, NatsConnection } from 'nats';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';

/**
 * Hands stored chat messages to agent pods through JetStream: at-least-once,
 * de-duplicated by message id (a retried post publishes the same `msgID`).
 */
@Injectable()
export class AgentDeliveryService implements OnModuleInit {
  private js!: JetStreamClient;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
  ) {}

  async onModuleInit(): Promise<void> {
    await ensureInboxStream(this.nc, this.bus.prefix, this.env.INBOX_STORAGE);
    this.js = this.nc.jetstream();
  }

  async deliver(message: ChatMessage): Promise<void> {
    try {
      await this.js.publish(AgentInbox.subject(this.bus.prefix, message.agent_id), encodeJson(message), {
        msgID: message.id,
      });
    } catch (error) {
      throw new UnavailableError(`could not hand the message to agent ${message.agent_id}: ${(error as Error).message}`);
    }
  }
}
