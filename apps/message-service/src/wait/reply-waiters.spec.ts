import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AgentReply } from '@mcpgw/contracts';
import { ReplyWaiters } from './reply-waiters';

const replyTo = (channelId: string, messageId: string) =>
  ({ channel_id: channelId, in_reply_to: messageId, content: [] }) as unknown as AgentReply;

describe('ReplyWaiters', () => {
  it('wakes every waiter of a message, and only those', async () => {
    const waiters = new ReplyWaiters();
    const [channel, m1, m2] = [randomUUID(), randomUUID(), randomUUID()];
    const a = waiters.register(channel, m1);
    const b = waiters.register(channel, m1);
    const other = waiters.register(channel, m2);
    expect(waiters.wake(replyTo(channel, m1))).toBe(2);
    await expect(a.reply).resolves.toMatchObject({ in_reply_to: m1 });
    await expect(b.reply).resolves.toMatchObject({ in_reply_to: m1 });
    other.cancel();
    await expect(other.reply).resolves.toBeUndefined();
  });

  it('forgets cancelled waiters', () => {
    const waiters = new ReplyWaiters();
    const wait = waiters.register(randomUUID(), randomUUID());
    expect(waiters.size).toBe(1);
    wait.cancel();
    expect(waiters.size).toBe(0);
    expect(waiters.pending()).toEqual([]);
  });
});
