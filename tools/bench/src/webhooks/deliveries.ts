import { summarise } from '../load/latency';
import type { OutboxState } from './outbox';
import type { Arrival } from './protocol';

/** The bound: a delivery is on time when it reaches the receiver within this of the call's end. */
export const ON_TIME_MS = 2_000;
/** After a window, wait for late deliveries until this long passes with none… */
export const QUIET_MS = 2_000;
/** …or this long in all. */
export const MAX_WAIT_MS = 30_000;

/** What the webhook of a "stack + 1 webhook" system did for the calls of one window. */
export interface WebhookFigures {
  receiver: 'live' | 'dead';
  /** Successful calls of the window (each should cause one `tool_call.completed`). */
  calls: number;
  /** Calls of the window with at least one delivery at the receiver. */
  delivered: number;
  /** Of those, delivered within ON_TIME_MS of the call's end as the load generator saw it. */
  onTime: number;
  /** Of those, first delivered after the window had ended (during the wait). */
  afterWindow: number;
  /** Calls of the window with no delivery when the wait ended: the backlog left. */
  missing: number;
  /** Deliveries of a window call beyond its first (at least once: a retry that was in fact received). */
  duplicates: number;
  /** Deliveries of calls outside the window (priming, warm-up, earlier levels) that arrived meanwhile. */
  otherDeliveries: number;
  /** First arrival at the receiver minus the call's end at the load generator, ms. */
  lagMs?: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** How long the bench waited after the window for late deliveries. */
  waitedSeconds: number;
  /** The outbox after the wait (every row since the webhook was added, its priming included). */
  outbox?: OutboxState;
  /** Why the outbox could not be read, if it could not. */
  outboxError?: string;
}

/** Matches deliveries to the window's calls by tag. Pure: `callEnds` and `arrivals` as collected. */
export function deliveryFigures(
  receiver: 'live' | 'dead',
  callEnds: [string, number][],
  arrivals: Arrival[],
  windowEndMs: number,
  waitedMs: number,
): WebhookFigures {
  const endOf = new Map(callEnds);
  const first = new Map<string, number>();
  let duplicates = 0;
  let otherDeliveries = 0;
  for (const arrival of arrivals) {
    const end = arrival.tag === undefined ? undefined : endOf.get(arrival.tag);
    if (end === undefined) {
      otherDeliveries++;
      continue;
    }
    const seen = first.get(arrival.tag!);
    if (seen !== undefined) duplicates++;
    if (seen === undefined || arrival.atMs < seen) first.set(arrival.tag!, arrival.atMs);
  }
  const lags = new Float64Array(first.size);
  let i = 0;
  let onTime = 0;
  let afterWindow = 0;
  for (const [tag, at] of first) {
    const lag = at - endOf.get(tag)!;
    lags[i++] = lag;
    if (lag <= ON_TIME_MS) onTime++;
    if (at > windowEndMs) afterWindow++;
  }
  return {
    receiver,
    calls: endOf.size,
    delivered: first.size,
    onTime,
    afterWindow,
    missing: endOf.size - first.size,
    duplicates,
    otherDeliveries,
    lagMs: first.size ? summarise(lags, first.size) : undefined,
    waitedSeconds: waitedMs / 1000,
  };
}

/**
 * After a window: collects what the receiver got, and keeps collecting while
 * deliveries of the window's calls are missing, until QUIET_MS pass with no
 * delivery at all or MAX_WAIT_MS in all. Returns every arrival since the
 * collect before the window, and how long it waited.
 */
export async function awaitDeliveries(
  collect: () => Promise<Arrival[]>,
  tags: Set<string>,
  options: { quietMs?: number; maxWaitMs?: number; pollMs?: number } = {},
): Promise<{ arrivals: Arrival[]; waitedMs: number }> {
  const { quietMs = QUIET_MS, maxWaitMs = MAX_WAIT_MS, pollMs = 200 } = options;
  const started = Date.now();
  let lastArrival = started;
  const arrivals: Arrival[] = [];
  const matched = new Set<string>();
  for (;;) {
    const batch = await collect();
    for (const arrival of batch) {
      arrivals.push(arrival);
      if (arrival.tag !== undefined && tags.has(arrival.tag)) matched.add(arrival.tag);
    }
    const now = Date.now();
    if (batch.length) lastArrival = now;
    if (matched.size >= tags.size || now - lastArrival >= quietMs || now - started >= maxWaitMs)
      return { arrivals, waitedMs: now - started };
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
