import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AgentInbox, ReplyHeaders, UnavailableError, type ChatMessage } from '@mcpgw/contracts';
import { BUS_OPTIONS, NATS_CONNECTION, encodeJson, ensureInboxStream, restoreInboxStream, type BusOptions } from '@mcpgw/bus';
import { headers, type JetStreamClient, type NatsConnection } from 'nats';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { REPLICA_REPLIES_SUBJECT } from '../replies/replica-replies.subject';

/** How often the inbox stream is checked (and made again if it was lost). */
const STREAM_CHECK_MS = 3_000;

/** JetStream de-duplicates on this header within the stream's window. */
const MSG_ID_HEADER = 'Nats-Msg-Id';

/**
 * Hands stored chat messages to agent pods through JetStream: at-least-once,
 * de-duplicated by message id (a retried post publishes the same id). Each
 * message names this replica's replies subject, where its pod answers.
 *
 * `deliver` waits for JetStream's ack: a caller told "posted" can rely on the
 * delivery. `deliverForWaiter` does not: its caller waits for the reply anyway
 * (post and wait), so a publish JetStream never took shows as a reply timeout,
 * and a retry posts the message again, which delivers it again. That saves a
 * message and a wake-up on every tools/call.
 */
@Injectable()
export class AgentDeliveryService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(AgentDeliveryService.name);
  private streamCheck?: NodeJS.Timeout;
  private readonly js: JetStreamClient;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(BUS_OPTIONS) private readonly bus: BusOptions,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
    @Inject(REPLICA_REPLIES_SUBJECT) private readonly repliesSubject: string,
  ) {
    this.js = nc.jetstream();
  }

  async onModuleInit(): Promise<void> {
    await ensureInboxStream(this.nc, this.bus.prefix, this.env.INBOX_STORAGE);
    this.streamCheck = setInterval(() => void this.checkStream(), STREAM_CHECK_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.streamCheck);
  }

  /**
   * Post-and-wait publishes without an ack, so a lost stream (a NATS server with
   * memory storage restarted, a deleted stream) would swallow messages unseen:
   * look every few seconds and make it again.
   */
  private async checkStream(): Promise<void> {
    try {
      if (await restoreInboxStream(this.nc, this.bus.prefix, this.env.INBOX_STORAGE)) {
        this.logger.warn('the inbox stream was gone: made it again');
      }
    } catch (error) {
      this.logger.warn(`inbox stream check failed: ${(error as Error).message}`);
    }
  }

  async deliver(message: ChatMessage): Promise<void> {
    try {
      await this.js.publish(this.inbox(message), encodeJson(message), { headers: this.headers(message) });
    } catch (error) {
      throw this.unavailable(message, error);
    }
  }

  deliverForWaiter(message: ChatMessage): void {
    try {
      this.nc.publish(this.inbox(message), encodeJson(message), { headers: this.headers(message) });
    } catch (error) {
      throw this.unavailable(message, error);
    }
  }

  private inbox(message: ChatMessage): string {
    return AgentInbox.subject(this.bus.prefix, message.agent_id);
  }

  /** The de-duplication id (JetStream drops a second copy within its window) and where to reply. */
  private headers(message: ChatMessage) {
    const hdrs = headers();
    hdrs.set(MSG_ID_HEADER, message.id);
    hdrs.set(ReplyHeaders.replyTo, this.repliesSubject);
    return hdrs;
  }

  private unavailable(message: ChatMessage, error: unknown): UnavailableError {
    return new UnavailableError(`could not hand the message to agent ${message.agent_id}: ${(error as Error).message}`);
  }
}
