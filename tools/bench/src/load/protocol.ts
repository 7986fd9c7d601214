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
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** CPU the load generator itself spent in the window (user + system). */
  loadGenCpuMs: number;
}

export type LoadReport =
  { type: 'warm' } | { type: 'done'; result: LoadResult } | { type: 'failed'; message: string } | { type: 'closed' };
