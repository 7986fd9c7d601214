import type { NatsConnection } from 'nats';
import { describe, expect, it } from 'vitest';
import { coalesceWrites } from './write-coalescing';

/** A stand-in for nats.js's connection: only the protocol handler's flush is seen. */
function fakeConnection() {
  const flushes: number[] = [];
  const protocol = { flushPending: () => void flushes.push(Date.now()) };
  return { nc: { protocol } as unknown as NatsConnection, protocol, flushes };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesceWrites', () => {
  it('turns the flushes of one event-loop turn into one, on the next turn', async () => {
    const { nc, protocol, flushes } = fakeConnection();
    coalesceWrites(nc);
    protocol.flushPending();
    await Promise.resolve(); // a microtask checkpoint, where nats.js would have written
    protocol.flushPending();
    protocol.flushPending();
    expect(flushes).toHaveLength(0);
    await nextTurn();
    expect(flushes).toHaveLength(1);
  });

  it('flushes again on a later turn', async () => {
    const { nc, protocol, flushes } = fakeConnection();
    coalesceWrites(nc);
    protocol.flushPending();
    await nextTurn();
    protocol.flushPending();
    await nextTurn();
    expect(flushes).toHaveLength(2);
  });

  it('refuses a client whose internals it does not know', () => {
    expect(() => coalesceWrites({} as NatsConnection)).toThrow(/internals changed/);
  });
});
