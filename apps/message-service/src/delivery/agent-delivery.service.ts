import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { UnavailableError, type InboxMessage } from '@mcpgw/contracts';
import { InboxPublisher, type InboxStreamSettings } from '@mcpgw/bus';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { REPLICA_REPLIES_SUBJECT, type ReplicaRepliesSubjects } from '../replies/replica-replies.subject';
import { InboxWatchService } from './inbox-watch.service';

/** How often the inbox stream is checked (and made again if it was lost). */
const STREAM_CHECK_MS = 3_000;

/**
 * Hands stored chat messages to agent pods through JetStream: at-least-once,
 * de-duplicated by message id (a retried post publishes the same id). Each
 * message names this replica's replies subject for its agent, where its pod answers.
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

  constructor(
    private readonly inboxes: InboxPublisher,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
    @Inject(REPLICA_REPLIES_SUBJECT) private readonly replies: ReplicaRepliesSubjects,
    private readonly watch: InboxWatchService,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.inboxes.ensureStream(this.streamSettings());
    await this.watch.start();
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
      if (await this.inboxes.restoreStream(this.streamSettings())) {
        this.logger.warn('the inbox stream was gone: made it again');
      }
    } catch (error) {
      this.logger.warn(`inbox stream check failed: ${(error as Error).message}`);
    }
  }

  private streamSettings(): InboxStreamSettings {
    return { storage: this.env.INBOX_STORAGE, replicas: this.env.INBOX_REPLICAS };
  }

  /** `requestId`: the HTTP request's id, on to the pod in `Mcpgw-Request-Id` (for its log lines). */
  async deliver(message: InboxMessage, requestId?: string): Promise<void> {
    try {
      await this.inboxes.deliver(message, this.replies.forAgent(message.agent_id), requestId);
    } catch (error) {
      throw this.unavailable(message, error);
    }
  }

  deliverForWaiter(message: InboxMessage, requestId?: string): void {
    try {
      this.inboxes.deliverUnconfirmed(message, this.replies.forAgent(message.agent_id), requestId);
    } catch (error) {
      throw this.unavailable(message, error);
    }
  }

  private unavailable(message: InboxMessage, error: unknown): UnavailableError {
    return new UnavailableError(`could not hand the message to agent ${message.agent_id}: ${(error as Error).message}`);
  }
}
