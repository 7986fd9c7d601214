import type { AgentReply } from '@mcpgw/contracts';

interface Waiter {
  resolve(reply: AgentReply | undefined): void;
}

/**
 * In-memory registry of this replica's open waits, keyed by (channel, message).
 * Resolved by reply-stored events from the bus, never by polling.
 */
export class ReplyWaiters {
  private readonly waiting = new Map<string, Set<Waiter>>();

  /** Register before looking in the database, so a reply landing in between is not missed. */
  register(channelId: string, messageId: string): { reply: Promise<AgentReply | undefined>; cancel(): void } {
    const key = keyOf(channelId, messageId);
    let waiter!: Waiter;
    const reply = new Promise<AgentReply | undefined>((resolve) => (waiter = { resolve }));
    const set = this.waiting.get(key) ?? new Set<Waiter>();
    set.add(waiter);
    this.waiting.set(key, set);
    const cancel = () => {
      set.delete(waiter);
      if (set.size === 0 && this.waiting.get(key) === set) this.waiting.delete(key);
      waiter.resolve(undefined);
    };
    return { reply, cancel };
  }

  /** Wake everyone waiting for this reply. */
  wake(reply: AgentReply): number {
    const set = this.waiting.get(keyOf(reply.channel_id, reply.in_reply_to));
    if (!set) return 0;
    for (const waiter of set) waiter.resolve(reply);
    return set.size;
  }

  /** Every (channel, message) someone waits for, for a recheck after a bus outage. */
  pending(): { channelId: string; messageId: string }[] {
    return [...this.waiting.keys()].map((key) => {
      const [channelId, messageId] = key.split(':');
      return { channelId, messageId };
    });
  }

  get size(): number {
    return this.waiting.size;
  }
}

function keyOf(channelId: string, messageId: string): string {
  return `${channelId}:${messageId}`;
}
