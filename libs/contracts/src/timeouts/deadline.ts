/**
 * The one deadline of a call, as each process holds it: a point on this
 * process's monotonic clock. It never crosses a process boundary as a point in
 * time; on the wire it is the time left (`toWire()`, milliseconds, like gRPC's
 * `grpc-timeout`), and the receiver anchors that to its own clock on arrival
 * (`fromWire()`). So no host compares its clock with another's: a skewed or
 * stepped wall clock cannot make a call expire early or live on. The cost is the
 * time a message spends in transit or queued, which the receiver does not see;
 * see apps/gateway/src/timeouts/README.md.
 */
export class Deadline {
  private constructor(private readonly at: number) {}

  /** `ms` from now (negative or NaN counts as 0). */
  static after(ms: number): Deadline {
    return new Deadline(now() + (Number.isFinite(ms) && ms > 0 ? ms : 0));
  }

  /**
   * A deadline that arrived as the time left: anchored now. Undefined when the
   * sender gave none (an older sender, or a message nobody waits on).
   */
  static fromWire(remainingMs: unknown): Deadline | undefined {
    return isWireBudget(remainingMs) ? Deadline.after(remainingMs) : undefined;
  }

  /** The time left, in whole milliseconds, never negative: what goes on the wire. */
  toWire(): number {
    return Math.ceil(this.remainingMs());
  }

  remainingMs(): number {
    return Math.max(0, this.at - now());
  }

  get expired(): boolean {
    return now() >= this.at;
  }

  /** The earlier of the two. */
  min(other: Deadline | undefined): Deadline {
    return other && other.at < this.at ? other : this;
  }

  /**
   * Abort `controller` when the deadline passes (at once if it already has),
   * with `reason()`: a DeadlineExceededError unless given. One timer, unref'd;
   * the returned function clears it, for work that ended first.
   */
  abortOnExpiry(
    controller: Pick<AbortController, 'abort'>,
    reason: () => unknown = () => new DeadlineExceededError('call'),
  ): () => void {
    const abort = () => controller.abort(reason());
    if (this.expired) {
      abort();
      return () => undefined;
    }
    const timer = setTimeout(abort, this.remainingMs());
    timer.unref?.();
    return () => clearTimeout(timer);
  }

  /** A signal that aborts at the deadline. Prefer `abortOnExpiry` when the work can end first (it clears its timer). */
  signal(): AbortSignal {
    const controller = new AbortController();
    this.abortOnExpiry(controller);
    return controller.signal;
  }
}

/** The reason of an abort at a deadline. */
export class DeadlineExceededError extends Error {
  constructor(what: string) {
    super(`the ${what}'s deadline passed`);
    this.name = 'DeadlineExceededError';
  }
}

/** A remaining budget as the wire carries it: a finite number of milliseconds, 0 or more. */
export function isWireBudget(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function now(): number {
  return performance.now();
}
