import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  InvalidRequestError,
  NotFoundError,
  type AgentReply,
  type BusPattern,
  type BusResponse,
  type ChatMessage,
  type Deadline,
  type WaitResult,
} from '@mcpgw/contracts';
import { BusClient } from '@mcpgw/bus';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { MessagesService } from '../messages/messages.service';
import { MessagesStore } from '../messages/messages.store';
import { ReplyNotices } from './reply-notices.service';
import { waitDeadline } from './wait-deadline';

/**
 * "The message on channel C that answers message M, or a timeout." See README.md
 * beside this file for why it cannot miss a reply and never polls.
 */
@Injectable()
export class WaitService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WaitService.name);
  private stopped = false;

  constructor(
    private readonly store: MessagesStore,
    private readonly messages: MessagesService,
    private readonly notices: ReplyNotices,
    private readonly bus: BusClient,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
  ) {}

  onModuleInit(): void {
    void this.recheckAfterReconnects();
  }

  onModuleDestroy(): void {
    this.stopped = true;
  }

  /**
   * The reply to a message already posted, or a timeout. The message may have
   * been delivered by another replica, whose pod answers there: listen for its
   * notice first, then look.
   */
  waitForReply(channelId: string, messageId: string, timeoutMs: unknown): Promise<WaitResult> {
    const deadline = waitDeadline(timeoutMs, this.env.WAIT_MAX_MS);
    return this.awaitReply(messageId, deadline, async (listen) => {
      await listen();
      const stored = await this.store.findReply(channelId, messageId);
      if (!stored.messageExists) throw new NotFoundError(`no message ${messageId} on channel ${channelId}`);
      return { channelId, reply: stored.reply };
    });
  }

  /**
   * Post a chat message and wait for its reply in one round trip: the waiter is
   * registered before the message is delivered, so a fresh message needs no
   * database read at all, and its pod answers this replica directly. A
   * re-posted message may have its reply already; if not, its first posting
   * may be on another replica, so listen for the reply's notice, then look once more.
   */
  async postAndWait(envelope: unknown, timeoutMs: unknown): Promise<BusResponse<typeof BusPattern.PostAndWait>> {
    const messageId = (envelope as { id?: unknown } | null)?.id;
    if (typeof messageId !== 'string' || (envelope as { type?: unknown }).type !== 'chat_message') {
      throw new InvalidRequestError('post_and_wait takes a chat_message with an id');
    }
    // Bounded by the agent's own budget too: the message is checked before it is stored, just below.
    const deadline = waitDeadline(timeoutMs, this.env.WAIT_MAX_MS, envelope as Pick<ChatMessage, 'meta'>);
    let posted!: BusResponse<typeof BusPattern.PostMessage>;
    const result = await this.awaitReply(messageId, deadline, async (listen) => {
      const { existingReply, ...rest } = await this.messages.postChat(envelope);
      posted = rest;
      if (!posted.duplicate || existingReply) return { channelId: posted.channel_id, reply: existingReply };
      await listen();
      const stored = await this.store.findReply(posted.channel_id, messageId);
      return { channelId: posted.channel_id, reply: stored.reply };
    });
    return { ...posted, result };
  }

  /**
   * The one way to wait: register, do `first` (which may already find the
   * reply, and may `listen` for a reply stored on another replica), then sleep
   * until a wake-up or the deadline (from `waitDeadline`; one timer);
   * at the deadline, one last read covers a wake-up lost on the bus. One read, not a poll.
   */
  private async awaitReply(
    messageId: string,
    deadline: Deadline,
    first: (listen: () => Promise<void>) => Promise<{ channelId: string; reply?: AgentReply }>,
  ): Promise<WaitResult> {
    const wait = this.notices.waiters.register(messageId);
    const timer = setTimeout(wait.cancel, deadline.remainingMs());
    let listening: { stop(): void } | undefined;
    const listen = async () => void (listening ??= await this.notices.listen(messageId));
    try {
      const { channelId, reply: early } = await first(listen);
      wait.onChannel(channelId);
      const reply = early ?? (await wait.reply);
      if (reply) return { status: 'replied', reply };
      const late = await this.store.findReply(channelId, messageId);
      return late.reply ? { status: 'replied', reply: late.reply } : { status: 'timeout' };
    } finally {
      clearTimeout(timer);
      wait.cancel();
      listening?.stop();
    }
  }

  /** Wake-ups sent while this replica was cut off from NATS are lost: look in the database once. */
  private async recheckAfterReconnects(): Promise<void> {
    for await (const _ of this.bus.reconnects()) {
      if (this.stopped) return;
      const pending = this.notices.waiters.pending();
      this.logger.warn(`bus reconnected: rechecking ${pending.length} open waits`);
      for (const { channelId, messageId } of pending) {
        const stored = await this.store.findReply(channelId, messageId).catch(() => undefined);
        if (stored?.reply) this.notices.waiters.wake(stored.reply);
      }
    }
  }
}
