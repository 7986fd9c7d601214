import type { HoldDeadline } from './database-hold';

interface Pending<I, O> {
  item: I;
  /** How long its caller lets it wait for the database (DatabaseHold), if it said. */
  deadline: HoldDeadline | undefined;
  /** When it was submitted (performance.now()): the gathering counts from the oldest item. */
  at: number;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions {
  /** Items one batch takes at most; more wait for the next. */
  maxBatch?: number;
  /**
   * Write a batch this long after its oldest item was submitted (or once
   * `maxBatch` items are queued), to gather more: for writes nobody waits on,
   * where a statement of many rows costs far less per row than one of a few.
   * Items that waited for the write before theirs have had their time. 0 (the
   * default): write at the next turn of the event loop.
   */
  gatherMs?: number;
}

/**
 * Group commit: writes submitted while a batch is being written wait and go
 * together in the next one, so concurrent callers share one statement and one
 * commit. A batch starts on the next turn of the event loop (everything that
 * arrived in this one joins it), or `gatherMs` after its oldest item, and only
 * one is in flight at a time, so under load batches grow by themselves and
 * when idle a write waits for nothing (or for the gathering).
 *
 * `write` gets the batch and returns one outcome per item, in order; if it
 * throws, every caller of that batch gets the error. While the database is
 * away the batch waits for it (DatabaseHold) as long as its most patient
 * caller allows (`write`'s `deadline`, for its statements: `holdingUntil`), and
 * what arrives meanwhile gathers into the next batch.
 */
export class GroupCommit<I, O> {
  private queue: Pending<I, O>[] = [];
  private busy = false;
  private scheduled = false;
  private gathering?: NodeJS.Timeout;
  private readonly maxBatch: number;
  private readonly gatherMs: number;

  constructor(
    private readonly write: (items: I[], deadline: HoldDeadline | undefined) => Promise<O[]>,
    options: GroupCommitOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.gatherMs = options.gatherMs ?? 0;
  }

  /** `item`, written in the next batch; `deadline`: how long its caller lets it wait for the database, if it says. */
  submit(item: I, deadline?: HoldDeadline): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const at = this.gatherMs > 0 ? performance.now() : 0;
      this.queue.push({ item, deadline, at, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.busy) return;
    if (this.gatherMs > 0 && this.queue.length < this.maxBatch) {
      const left = this.gatherMs - (performance.now() - this.queue[0].at);
      if (left > 0) {
        this.gathering ??= setTimeout(() => void this.flush(), left);
        return;
      }
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    clearTimeout(this.gathering);
    this.gathering = undefined;
    // The timer and the turn of the loop can both come due: the batch under way takes the rest next.
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    const batch = this.queue.splice(0, this.maxBatch);
    try {
      const outcomes = await this.write(
        batch.map((pending) => pending.item),
        mostPatient(batch),
      );
      batch.forEach((pending, i) => pending.resolve(outcomes[i]));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      this.busy = false;
      if (this.queue.length > 0) this.schedule();
    }
  }
}

/**
 * Not the first caller's deadline: the batch is everyone's, held as long as the most
 * patient allows; a caller that set none waits up to DB_OUTAGE_HOLD_MS, so the batch does too.
 */
function mostPatient(batch: readonly { deadline: HoldDeadline | undefined }[]): HoldDeadline | undefined {
  let patient = batch[0]?.deadline;
  for (const { deadline } of batch) {
    if (deadline === undefined) return undefined;
    if (deadline.remainingMs() > patient!.remainingMs()) patient = deadline;
  }
  return patient;
}
