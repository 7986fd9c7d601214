import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { NotFoundError, type AgentReply, type WaitResult } from '@mcpgw/contracts';
import { NATS_CONNECTION } from '@mcpgw/bus';
import type { NatsConnection } from 'nats';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { MessagesStore } from '../messages/messages.store';
import { ReplyWaiters } from './reply-waiters';

/**
 * "The message on channel C that answers message M, or a timeout." See README.md
 * beside this file for why it cannot miss a reply and never polls.
 */
@Injectable()
export class WaitService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WaitService.name);
  private readonly waiters = new ReplyWaiters();
  private stopped = false;

  constructor(
    private readonly store: MessagesStore,
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(MESSAGE_SERVICE_ENV) private readonly env: MessageServiceEnv,
  ) {}

  onModuleInit(): void {
    void this.recheckAfterReconnects();
  }

  onModuleDestroy(): void {
    this.stopped = true;
  }

  async waitForReply(channelId: string, messageId: string, timeoutMs: number): Promise<WaitResult> {
    const deadline = Math.min(Math.max(timeoutMs, 0), this.env.WAIT_MAX_MS);
    const wait = this.waiters.register(channelId, messageId);
    const timer = setTimeout(wait.cancel, deadline);
    try {
      const stored = await this.store.findReply(channelId, messageId);
      if (!stored.messageExists) throw new NotFoundError(`no message ${messageId} on channel ${channelId}`);
      const reply = stored.reply ?? (await wait.reply);
      if (reply) return { status: 'replied', reply };
      // One look at the deadline covers a wake-up lost on the bus. One read, not a poll.
      const late = await this.store.findReply(channelId, messageId);
      return late.reply ? { status: 'replied', reply: late.reply } : { status: 'timeout' };
    } finally {
      clearTimeout(timer);
      wait.cancel();
    }
  }

  /** A reply was stored by some replica (possibly this one). */
  wake(reply: AgentReply): void {
    this.waiters.wake(reply);
  }

  /** Wake-ups sent while this replica was cut off from NATS are lost: look in the database once. */
  private async recheckAfterReconnects(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (this.stopped) return;
      if (status.type !== 'reconnect') continue;
      const pending = this.waiters.pending();
      this.logger.warn(`bus reconnected: rechecking ${pending.length} open waits`);
      for (const { channelId, messageId } of pending) {
        const stored = await this.store.findReply(channelId, messageId).catch(() => undefined);
        if (stored?.reply) this.waiters.wake(stored.reply);
      }
    }
  }
}
