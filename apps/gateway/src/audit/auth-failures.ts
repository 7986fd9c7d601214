/** A refused credential, as the HTTP layer saw it. */
export interface Refusal {
  /** The client's address. */
  source: string;
  /** The route family: `mcp-a`, `mcp-b`, `rest`, `files`, `webhooks`, `a2a`… */
  surface: string;
  /** 401 or 403. */
  status: number;
  agentId?: string;
}

export interface RefusalCount extends Refusal {
  /** The start of the window they fell in (ISO). */
  window: string;
  count: number;
}

/** Distinct (window, source, surface, status, agent) kept at most; past it, refusals count under source `(other)`. */
const MAX_KEYS = 10_000;

/**
 * Refused credentials counted per window (a minute by default) and source,
 * not one row per request: a flood of made-up keys is one row a window per
 * address, and the count is bounded in memory whatever the flood.
 */
export class RefusalCounter {
  private counts = new Map<string, RefusalCount>();

  constructor(private readonly windowMs = 60_000) {}

  add(refusal: Refusal, at = new Date()): void {
    const window = this.windowOf(at);
    let key = [window, refusal.source, refusal.surface, refusal.status, refusal.agentId ?? ''].join('\u0000');
    let entry = this.counts.get(key);
    if (!entry && this.counts.size >= MAX_KEYS) {
      key = [window, '(other)', refusal.surface, refusal.status, ''].join('\u0000');
      entry = this.counts.get(key);
      refusal = { ...refusal, source: '(other)', agentId: undefined };
    }
    if (entry) entry.count++;
    else this.counts.set(key, { ...refusal, window, count: 1 });
  }

  /** The windows that ended by `now` (all of them with `all`), taken out. */
  take(now = new Date(), all = false): RefusalCount[] {
    const current = this.windowOf(now);
    const done: RefusalCount[] = [];
    for (const [key, entry] of this.counts) {
      if (all || entry.window < current) {
        done.push(entry);
        this.counts.delete(key);
      }
    }
    return done;
  }

  private windowOf(at: Date): string {
    return new Date(Math.floor(at.getTime() / this.windowMs) * this.windowMs).toISOString();
  }
}
