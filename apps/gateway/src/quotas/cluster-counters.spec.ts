import { checkQuotaGossip } from '@mcpgw/contracts';
import { describe, expect, it } from 'vitest';
import { ClusterCounters } from './cluster-counters';

function clock(start = 1_000_000) {
  const state = { now: start };
  return { state, now: () => state.now };
}

describe('ClusterCounters', () => {
  it("adds the live local count to every live peer's last gossip", () => {
    const time = clock();
    const counters = new ClusterCounters(3_000, time.now);
    counters.startCalls('a/apikey:k', 2);
    counters.openStream('a/apikey:k');
    counters.hear('replica-2', [['a/apikey:k', 3, 1, 7]]);
    counters.hear('replica-3', [
      ['a/apikey:k', 1, 0, 1],
      ['a/apikey:other', 5, 0, 5],
    ]);
    expect(counters.cluster('a/apikey:k')).toEqual({ calls: 6, streams: 2, rate: 10 });
    expect(counters.cluster('a/apikey:other')).toEqual({ calls: 5, streams: 0, rate: 5 });
    expect(counters.livePeers()).toBe(2);
  });

  it("replaces a peer's counts with its next gossip, and forgets a silent peer after the stale time", () => {
    const time = clock();
    const counters = new ClusterCounters(3_000, time.now);
    counters.hear('replica-2', [['p', 4, 0, 4]]);
    counters.hear('replica-2', [['p', 1, 0, 1]]);
    expect(counters.cluster('p').calls).toBe(1);
    time.state.now += 3_001;
    expect(counters.cluster('p')).toEqual({ calls: 0, streams: 0, rate: 0 });
    expect(counters.livePeers()).toBe(0);
  });

  it('releases calls and streams, never below zero', () => {
    const counters = new ClusterCounters(3_000, clock().now);
    counters.startCalls('p', 1);
    counters.endCalls('p', 1);
    counters.endCalls('p', 1);
    counters.closeStream('p');
    expect(counters.cluster('p').calls).toBe(0);
    expect(counters.cluster('p').streams).toBe(0);
  });

  it('counts calls admitted in the last second, and forgets older ones', () => {
    const time = clock();
    const counters = new ClusterCounters(3_000, time.now);
    counters.startCalls('p', 3);
    counters.endCalls('p', 3);
    time.state.now += 500;
    counters.startCalls('p', 2);
    counters.endCalls('p', 2);
    expect(counters.cluster('p').rate).toBe(5);
    time.state.now += 600; // the first three are over a second old
    expect(counters.cluster('p').rate).toBe(2);
    time.state.now += 1_000;
    expect(counters.cluster('p').rate).toBe(0);
  });

  it('gossips only principals with something live, and drops idle ones', () => {
    const time = clock();
    const counters = new ClusterCounters(3_000, time.now);
    counters.startCalls('busy', 1);
    counters.startCalls('done', 1);
    counters.endCalls('done', 1);
    expect(counters.snapshot()).toEqual([
      ['busy', 1, 0, 1],
      ['done', 0, 0, 1],
    ]);
    time.state.now += 1_100;
    expect(counters.snapshot()).toEqual([['busy', 1, 0, 0]]);
    counters.endCalls('busy', 1);
    expect(counters.snapshot()).toEqual([]);
  });

  it('a snapshot passes the gossip contract; a malformed gossip does not', () => {
    const counters = new ClusterCounters(3_000, clock().now);
    counters.startCalls('demo-agent/apikey:k', 2);
    expect(checkQuotaGossip({ replica: 'r1', entries: counters.snapshot() }).ok).toBe(true);
    expect(checkQuotaGossip({ replica: 'r1', entries: [['p', -1, 0, 0]] }).ok).toBe(false);
    expect(checkQuotaGossip({ replica: 'r1', entries: [['p', 1, 0]] }).ok).toBe(false);
    expect(checkQuotaGossip({ replica: '', entries: [] }).ok).toBe(false);
    expect(checkQuotaGossip({ entries: [] }).ok).toBe(false);
  });
});
