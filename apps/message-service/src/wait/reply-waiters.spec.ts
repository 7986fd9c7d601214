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
    const a = waiters.register(m1, channel);
    const b = waiters.register(m1);
    const other = waiters.register(m2, channel);
    expect(waiters.wake(replyTo(channel, m1))).toBe(2);
    await expect(a.reply).resolves.toMatchObject({ in_reply_to: m1 });
    await expect(b.reply).resolves.toMatchObject({ in_reply_to: m1 });
    other.cancel();
    await expect(other.reply).resolves.toBeUndefined();
  });

  it('ignores a reply that names another channel', () => {
    const waiters = new ReplyWaiters();
    const message = randomUUID();
    waiters.register(message, randomUUID());
    expect(waiters.wake(replyTo(randomUUID(), message))).toBe(0);
  });

  it('learns the channel after registering, for rechecks', () => {
    const waiters = new ReplyWaiters();
    const [channel, message] = [randomUUID(), randomUUID()];
    const wait = waiters.register(message);
    expect(waiters.pending()).toEqual([]);
    wait.onChannel(channel);
    expect(waiters.pending()).toEqual([{ channelId: channel, messageId: message }]);
  });

  it('forgets cancelled waiters', () => {
    const waiters = new ReplyWaiters();
    const wait = waiters.register(randomUUID(), randomUUID());
    expect(waiters.size).toBe(1);
    wait.cancel();
    expect(waiters.size).toBe(0);
  });
});
