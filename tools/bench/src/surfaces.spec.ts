import { describe, expect, it } from 'vitest';
import type { Measurement } from './measure';
import { medianRound } from './surfaces';

const window = (callsPerSecond: number, p50: number) =>
  ({ system: 'stack-rest', callsPerSecond, latencyMs: { p50 }, cpuMsPerCall: p50 / 10 }) as unknown as Measurement;

describe('medianRound', () => {
  it('keeps the whole window of the round with the median calls/s, and every round in order', () => {
    const m = medianRound([window(900, 9), window(1200, 7), window(1000, 8)]);
    expect(m.callsPerSecond).toBe(1000);
    expect(m.latencyMs.p50).toBe(8); // its own latency, not a mix of rounds
    expect(m.rounds).toEqual([900, 1200, 1000]);
    expect(m.roundsCpuMsPerCall).toEqual([0.9, 0.7, 0.8]);
  });

  it('takes the lower middle of an even count, and adds nothing to a single window', () => {
    expect(medianRound([window(1100, 1), window(1000, 2)]).callsPerSecond).toBe(1000);
    const single = medianRound([window(1000, 2)]);
    expect(single.rounds).toBeUndefined();
    expect(single.roundsCpuMsPerCall).toBeUndefined();
  });
});
