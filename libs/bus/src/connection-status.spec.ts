import { describe, expect, it } from 'vitest';
import { ConnectionEvents } from './connection-status';

async function* statuses(...types: string[]): AsyncIterable<{ type: string; data?: unknown }> {
  for (const type of types) yield { type, data: '127.0.0.1:4222' };
}

describe('NATS connection events', () => {
  it('counts disconnects and reconnects, and nothing else, and says whether the connection is up', async () => {
    const events = new ConnectionEvents();
    expect(events.connected).toBe(true);
    expect([...events.entries()]).toEqual([
      [{ event: 'disconnect' }, 0],
      [{ event: 'reconnect' }, 0],
    ]);
    const heard: string[] = [];
    await events.follow(
      statuses('pingTimer', 'disconnect', 'reconnecting', 'reconnecting', 'reconnect', 'update', 'disconnect'),
      (type) => heard.push(type),
    );
    expect(heard).toEqual(['disconnect', 'reconnect', 'disconnect']);
    expect(Object.fromEntries([...events.entries()].map(([l, v]) => [l.event, v]))).toEqual({
      disconnect: 2,
      reconnect: 1,
    });
    expect(events.connected).toBe(false);
    events.record('reconnect');
    expect(events.connected).toBe(true);
  });
});
