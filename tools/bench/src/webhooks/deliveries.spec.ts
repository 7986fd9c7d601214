import { describe, expect, it } from 'vitest';
import { awaitDeliveries, deliveryFigures } from './deliveries';
import type { Arrival } from './protocol';

const at = (tag: string | undefined, atMs: number): Arrival => ({ atMs, id: `msg_${tag}`, tag });

describe('deliveryFigures', () => {
  it('matches deliveries to the window calls by tag: lag, on time, late, missing, duplicates, others', () => {
    const calls: [string, number][] = [
      ['r.0.0', 1_000],
      ['r.0.1', 1_100],
      ['r.1.0', 1_200],
      ['r.1.1', 1_300],
    ];
    const arrivals = [
      at('r.0.0', 1_010),
      at('r.0.1', 1_150),
      at('r.0.1', 1_400), // a second attempt that was in fact received
      at('r.1.0', 4_000), // 2.8 s late, after the window (ended at 2_000)
      at('prime.0.0', 900), // a call of the priming load
      at(undefined, 950), // a body without a tag
    ];
    const f = deliveryFigures('live', calls, arrivals, 2_000, 2_500);
    expect(f).toMatchObject({
      calls: 4,
      delivered: 3,
      onTime: 2,
      afterWindow: 1,
      missing: 1,
      duplicates: 1,
      otherDeliveries: 2,
      waitedSeconds: 2.5,
    });
    expect(f.lagMs).toMatchObject({ p50: 50, max: 2_800 });
  });

  it('a dead receiver: nothing delivered, no lag', () => {
    const f = deliveryFigures('dead', [['r.0.0', 1]], [], 2, 0);
    expect(f).toMatchObject({ delivered: 0, missing: 1, onTime: 0, lagMs: undefined });
  });
});

describe('awaitDeliveries', () => {
  it('stops as soon as every call of the window has a delivery', async () => {
    const batches = [[at('a', 1)], [at('b', 2)], [at('c', 3)]];
    const { arrivals } = await awaitDeliveries(() => Promise.resolve(batches.shift() ?? []), new Set(['a', 'b']), {
      pollMs: 1,
    });
    expect(arrivals.map((a) => a.tag)).toEqual(['a', 'b']);
  });

  it('stops after a quiet spell when some never arrive', async () => {
    const { arrivals, waitedMs } = await awaitDeliveries(() => Promise.resolve([]), new Set(['a']), {
      quietMs: 50,
      pollMs: 5,
    });
    expect(arrivals).toEqual([]);
    expect(waitedMs).toBeGreaterThanOrEqual(50);
    expect(waitedMs).toBeLessThan(1_000);
  });

  it('stops at the bound however busy the receiver stays', async () => {
    const { waitedMs } = await awaitDeliveries(() => Promise.resolve([at('other', 0)]), new Set(['a']), {
      quietMs: 1_000,
      maxWaitMs: 60,
      pollMs: 5,
    });
    expect(waitedMs).toBeGreaterThanOrEqual(60);
    expect(waitedMs).toBeLessThan(1_000);
  });
});
