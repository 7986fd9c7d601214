import { setTimeout as delay } from 'node:timers/promises';

export interface RetryOptions {
  /** Tries in all, the first included; unbounded when absent (then stop it with `signal` or `retryIf`). */
  attempts?: number;
  /** The wait after the first failure; each wait after doubles it, up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs?: number;
  /** Stops the waiting: no further try once aborted (the one under way ends by itself), the last error is thrown. */
  signal?: AbortSignal;
  /** Whether this error is worth another try (default: every error). */
  retryIf?: (error: unknown) => boolean;
  /** Told of each failure that will be retried, before the wait (to log). */
  onRetry?: (error: unknown, attempt: number) => void;
  /**
   * Wait a random 50-100 % of each delay: many clients failing together (a
   * fleet of agents registering at once) do not all try again together.
   */
  jitter?: boolean;
}

/**
 * `work` until it resolves, with exponential backoff between tries. The first
 * try always runs, even with an aborted signal. Throws the last error once the
 * tries are used up, the error is not retryable, or `signal` aborts.
 */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { attempts = Infinity, firstDelayMs, maxDelayMs = Infinity, signal, retryIf, onRetry, jitter } = options;
  for (let attempt = 1, wait = firstDelayMs; ; attempt++, wait = Math.min(wait * 2, maxDelayMs)) {
    try {
      return await work(attempt);
    } catch (error) {
      if (attempt >= attempts || signal?.aborted || (retryIf && !retryIf(error))) throw error;
      onRetry?.(error, attempt);
      const pause = jitter ? wait * (0.5 + Math.random() / 2) : wait;
      const aborted = await delay(pause, false, { signal }).catch(() => true);
      if (aborted) throw error;
    }
  }
}
