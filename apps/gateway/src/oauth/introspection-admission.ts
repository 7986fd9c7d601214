import { isIPv6 } from 'node:net';

/** Introspections per second, in all: a flood of made-up tokens is not a flood at the issuer. */
export const INTROSPECTIONS_PER_SECOND = 50;
/** Of those, what tokens never seen active may use: the rest is kept for tokens seen active before. */
export const UNKNOWN_PER_SECOND = 40;
/** Token digests remembered as seen active (each until its expiry), the oldest forgotten first. */
const SEEN_ACTIVE_MAX = 50_000;
/** Sources whose buckets are kept; beyond, the one least recently used is forgotten. */
const SOURCES_MAX = 10_000;

export interface AdmissionSettings {
  /** Tokens not seen active one source may have introspected per minute (a token found active is given back). */
  perSourcePerMinute: number;
  now?: () => number;
}

/** What the issuer said: `unanswered` when it could not be asked (down, or an error). */
export type Outcome = 'active' | 'inactive' | 'unanswered';

export type Admission =
  /** `settle`: how the issuer answered. An active token is remembered; only an inactive one costs its source. */
  { ok: true; settle(outcome: Outcome, expiresAt?: number): void } | { ok: false; status: 429 | 503; reason: string };

/**
 * Who may have a token introspected now (README.md here, "Opaque tokens"),
 * asked before the issuer is: a token seen active before (its digest, never the
 * token, kept until it expires) may use the whole per-second budget; any other
 * needs its source's allowance (a token bucket per client address, an IPv6
 * /64 counting as one) and the budget's share for unknown tokens. A flood of
 * made-up tokens from one address is refused at its address, and one from
 * many leaves the reserved share to the callers who had a valid token.
 */
export class IntrospectionAdmission {
  private readonly seenActive = new Map<string, number>();
  private readonly sources = new Map<string, { tokens: number; at: number }>();
  private window = { second: 0, all: 0, unknown: 0 };
  private readonly now: () => number;

  constructor(private readonly settings: AdmissionSettings) {
    this.now = settings.now ?? Date.now;
  }

  admit(digest: string, source: string): Admission {
    const now = this.now();
    const second = Math.floor(now / 1000);
    if (second !== this.window.second) this.window = { second, all: 0, unknown: 0 };
    if (this.wasActive(digest, now)) {
      if (this.window.all >= INTROSPECTIONS_PER_SECOND) return busy();
      this.window.all++;
      return { ok: true, settle: (outcome, expiresAt) => this.settled(digest, outcome, expiresAt) };
    }
    const key = sourceKey(source);
    const bucket = this.bucketOf(key, now);
    if (bucket.tokens < 1) {
      return { ok: false, status: 429, reason: 'too many unknown access tokens from this address' };
    }
    if (this.window.unknown >= UNKNOWN_PER_SECOND || this.window.all >= INTROSPECTIONS_PER_SECOND) return busy();
    bucket.tokens--;
    this.window.all++;
    this.window.unknown++;
    return {
      ok: true,
      settle: (outcome, expiresAt) => {
        if (outcome !== 'inactive') bucket.tokens = Math.min(bucket.tokens + 1, this.settings.perSourcePerMinute);
        this.settled(digest, outcome, expiresAt);
      },
    };
  }

  private wasActive(digest: string, now: number): boolean {
    const until = this.seenActive.get(digest);
    if (until === undefined) return false;
    if (until > now) return true;
    this.seenActive.delete(digest);
    return false;
  }

  private settled(digest: string, outcome: Outcome, expiresAt = Infinity): void {
    if (outcome === 'unanswered') return;
    this.seenActive.delete(digest);
    if (outcome === 'inactive') return;
    if (this.seenActive.size >= SEEN_ACTIVE_MAX) this.seenActive.delete(this.seenActive.keys().next().value!);
    this.seenActive.set(digest, expiresAt);
  }

  /** The source's bucket, refilled for the time since it was last used (a full one for a new source). */
  private bucketOf(key: string, now: number): { tokens: number; at: number } {
    const capacity = this.settings.perSourcePerMinute;
    let bucket = this.sources.get(key);
    if (bucket) this.sources.delete(key);
    else {
      if (this.sources.size >= SOURCES_MAX) this.sources.delete(this.sources.keys().next().value!);
      bucket = { tokens: capacity, at: now };
    }
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) * capacity) / 60_000);
    bucket.at = now;
    this.sources.set(key, bucket);
    return bucket;
  }
}

function busy(): Admission {
  return { ok: false, status: 503, reason: 'too many access tokens to ask the issuer about' };
}

/** A client address as one source: IPv4 (an IPv4-mapped IPv6 address too) whole, IPv6 by its /64. */
export function sourceKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
