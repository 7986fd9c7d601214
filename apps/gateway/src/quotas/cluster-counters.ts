import { QUOTA_GOSSIP_MAX_ENTRIES, type QuotaGossipEvent } from '@mcpgw/contracts';

/** What one principal holds: calls in flight, open GET streams, calls admitted in the last second. */
export interface Counts {
  calls: number;
  streams: number;
  rate: number;
}

/** The rate window: the last second in SLOTS slots of SLOT_MS. */
const SLOT_MS = 100;
const SLOTS = 10;

/** One principal's counts on this replica. */
class LocalCounts {
  calls = 0;
  streams = 0;
  private readonly admitted = new Array<number>(SLOTS).fill(0);
  private readonly slotOf = new Array<number>(SLOTS).fill(-1);

  /** Calls admitted within the last second (to a slot's precision). */
  rate(now: number): number {
    const current = Math.floor(now / SLOT_MS);
    let sum = 0;
    for (let i = 0; i < SLOTS; i++) if (this.slotOf[i] > current - SLOTS) sum += this.admitted[i];
    return sum;
  }

  admit(n: number, now: number): void {
    const slot = Math.floor(now / SLOT_MS);
    const i = slot % SLOTS;
    if (this.slotOf[i] !== slot) {
      this.slotOf[i] = slot;
      this.admitted[i] = 0;
    }
    this.admitted[i] += n;
  }

  idle(now: number): boolean {
    return this.calls === 0 && this.streams === 0 && this.rate(now) === 0;
  }
}

interface Peer {
  heardAt: number;
  counts: Map<string, Counts>;
}

const ZERO: Counts = { calls: 0, streams: 0, rate: 0 };

/**
 * The counts quotas are enforced against: this replica's own, live, plus the
 * latest ones every other replica gossiped (quotas/README.md). A replica not
 * heard from for `staleMs` is forgotten, and so are its counts. No I/O: the
 * gossip service feeds `hear` and publishes `snapshot`.
 */
export class ClusterCounters {
  private readonly local = new Map<string, LocalCounts>();
  private readonly peers = new Map<string, Peer>();
  /** The peers' counts summed per principal; rebuilt after a peer is heard or forgotten. */
  private peerTotals: Map<string, Counts> | undefined = new Map();

  constructor(
    private readonly staleMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The principal's counts across the cluster, as far as this replica knows. */
  cluster(principal: string): Counts {
    const now = this.now();
    const own = this.local.get(principal);
    const others = this.totals(now).get(principal) ?? ZERO;
    return {
      calls: (own?.calls ?? 0) + others.calls,
      streams: (own?.streams ?? 0) + others.streams,
      rate: (own?.rate(now) ?? 0) + others.rate,
    };
  }

  /** `n` calls start here: in flight, and admitted in this second. */
  startCalls(principal: string, n: number): void {
    const own = this.own(principal);
    own.calls += n;
    own.admit(n, this.now());
  }

  endCalls(principal: string, n: number): void {
    const own = this.local.get(principal);
    if (own) own.calls = Math.max(0, own.calls - n);
  }

  openStream(principal: string): void {
    this.own(principal).streams++;
  }

  closeStream(principal: string): void {
    const own = this.local.get(principal);
    if (own) own.streams = Math.max(0, own.streams - 1);
  }

  /**
   * This replica's nonzero counts, for the gossip (the busiest first when
   * there are more than one message carries). Idle principals are dropped here.
   */
  snapshot(): QuotaGossipEvent['entries'] {
    const now = this.now();
    const entries: QuotaGossipEvent['entries'] = [];
    for (const [principal, own] of this.local) {
      if (own.idle(now)) this.local.delete(principal);
      else entries.push([principal, own.calls, own.streams, own.rate(now)]);
    }
    if (entries.length <= QUOTA_GOSSIP_MAX_ENTRIES) return entries;
    return entries.sort((a, b) => b[1] + b[2] + b[3] - (a[1] + a[2] + a[3])).slice(0, QUOTA_GOSSIP_MAX_ENTRIES);
  }

  /** Another replica's counts: they replace whatever it said before. */
  hear(replica: string, entries: QuotaGossipEvent['entries']): void {
    const counts = new Map<string, Counts>();
    for (const [principal, calls, streams, rate] of entries) counts.set(principal, { calls, streams, rate });
    this.peers.set(replica, { heardAt: this.now(), counts });
    this.peerTotals = undefined;
  }

  /** Calls in flight and streams open on this replica, all principals together. */
  localTotals(): { calls: number; streams: number } {
    let calls = 0;
    let streams = 0;
    for (const own of this.local.values()) {
      calls += own.calls;
      streams += own.streams;
    }
    return { calls, streams };
  }

  /** Other replicas heard from within `staleMs`. */
  livePeers(): number {
    this.forgetStale(this.now());
    return this.peers.size;
  }

  private own(principal: string): LocalCounts {
    let own = this.local.get(principal);
    if (!own) this.local.set(principal, (own = new LocalCounts()));
    return own;
  }

  private totals(now: number): Map<string, Counts> {
    this.forgetStale(now);
    if (this.peerTotals) return this.peerTotals;
    const totals = new Map<string, Counts>();
    for (const peer of this.peers.values()) {
      for (const [principal, c] of peer.counts) {
        const sum = totals.get(principal);
        if (sum) {
          sum.calls += c.calls;
          sum.streams += c.streams;
          sum.rate += c.rate;
        } else totals.set(principal, { ...c });
      }
    }
    return (this.peerTotals = totals);
  }

  private forgetStale(now: number): void {
    for (const [replica, peer] of this.peers) {
      if (now - peer.heardAt > this.staleMs) {
        this.peers.delete(replica);
        this.peerTotals = undefined;
      }
    }
  }
}
