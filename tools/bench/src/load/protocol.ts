import type { Target } from './mcp-http';

/** Parent → load generator: what to run. */
export interface LoadPlan {
  type: 'plan';
  target: Target;
  concurrency: number;
  warmupMs: number;
  tool: string;
  args: Record<string, unknown>;
  /** The text the result's first content item must carry (echo). */
  expectText?: string;
  /**
   * Start each call's `args.text` with a tag of its own (`#<run>.<client>.<seq> `, the same
   * length in all: the text keeps its size), so a webhook delivery that carries the result's
   * text can be matched to the very call. The echo must carry the tagged text back.
   */
  tagText?: boolean;
  /** Return, with the result, the tag and end time of every successful call of the window. */
  recordCalls?: boolean;
}

/** Parent → load generator: start measuring now (the parent has just sampled /proc), for this long. */
export interface LoadGo {
  type: 'go';
  durationMs: number;
}

/** Parent → load generator: the window is sampled; end the sessions (DELETE) and exit. */
export interface LoadClose {
  type: 'close';
}

/** What one measured window produced. */
export interface LoadResult {
  calls: number;
  errors: number;
  /** Up to a few distinct error descriptions with their counts. */
  errorKinds: Record<string, number>;
  elapsedMs: number;
  /** Epoch ms when the window ended (the last call of it had its answer). */
  endedAtMs: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** CPU the load generator itself spent in the window (user + system). */
  loadGenCpuMs: number;
  /** With `recordCalls`: [tag, epoch ms when the answer was complete] of each successful call of the window. */
  callEnds?: [string, number][];
}

export type LoadReport =
  { type: 'warm' } | { type: 'done'; result: LoadResult } | { type: 'failed'; message: string } | { type: 'closed' };
