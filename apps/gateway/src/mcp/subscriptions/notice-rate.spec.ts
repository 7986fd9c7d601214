import { describe, expect, it } from 'vitest';
import { NoticeRate } from './notice-rate';

describe('NoticeRate', () => {
  it('lets a burst through, then the rate, per agent', () => {
    let now = 0;
    const rate = new NoticeRate(10, 20, () => now);
    const passed = (agent: string, n: number) => Array.from({ length: n }, () => rate.admit(agent)).filter(Boolean);
    expect(passed('a', 100)).toHaveLength(20);
    expect(passed('b', 5)).toHaveLength(5); // another agent has its own bucket
    now += 500;
    expect(passed('a', 100)).toHaveLength(5);
    now += 60_000;
    expect(passed('a', 100)).toHaveLength(20); // never more than the burst
  });
});
