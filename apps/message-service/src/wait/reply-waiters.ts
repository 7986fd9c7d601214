import type { AgentReply } from '@mcpgw/contracts';

interface Waiter {
  resolve(reply: AgentReply | undefined): void;
}

/**
 * In-memory registry of this replica's open waits, keyed by message id (ids are
 * UUIDs, unique across channels). Resolved by reply-stored events from the bus,
 * never by polling.
 */
export class ReplyWaiters {
  /** message id -> its waiters, and the channel for rechecks. */
  private readonly waiting = new Map<string, { channelId?: string; waiters: Set<Waiter> }>();

  /**
   * Register before looking in the database (or before delivering the message),
   * so a reply landing in between is not missed. `channelId` may be set later.
   */
  register(messageId: string, channelId?: string) {
    let waiter!: Waiter;
    const reply = new Promise<AgentReply | undefined>((resolve) => (waiter = { resolve }));
    const entry = this.waiting.get(messageId) ?? { channelId, waiters: new Set<Waiter>() };
    entry.channelId ??= channelId;
    entry.waiters.add(waiter);
    this.waiting.set(messageId, entry);
    return {
      reply,
      onChannel: (id: string) => void (entry.channelId ??= id),
      cancel: () => {
        entry.waiters.delete(waiter);
        if (entry.waiters.size === 0 && this.waiting.get(messageId) === entry) this.waiting.delete(messageId);
        waiter.resolve(undefined);
      },
    };
  }

  /** Wake everyone waiting for this reply. */
  wake(reply: AgentReply): number {
    const entry = this.waiting.get(reply.in_reply_to);
    if (!entry || (entry.channelId && entry.channelId !== reply.channel_id)) return 0;
    for (const waiter of entry.waiters) waiter.resolve(reply);
    return entry.waiters.size;
  }

  /** Every message someone waits for (on a known channel), for a recheck after a bus outage. */
  pending(): { channelId: string; messageId: string }[] {
    return [...this.waiting.entries()]
      .filter(([, entry]) => entry.channelId)
      .map(([messageId, entry]) => ({ channelId: entry.channelId!, messageId }));
  }

  get size(): number {
    return this.waiting.size;
  }
}
