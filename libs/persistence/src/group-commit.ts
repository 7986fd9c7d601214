import { databaseHold } from './database-hold';

interface Pending<I, O> {
  item: I;
  /** How long its caller lets it wait for the database (DatabaseHold), if it said. */
  deadline: number | undefined;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Group commit: writes submitted while a batch is being written wait and go
 * together in the next one, so concurrent callers share one statement and one
 * commit. A batch starts on the next turn of the event loop (everything that
 * arrived in this one joins it) and only one is in flight at a time, so under
 * load batches grow by themselves and when idle a write waits for nothing.
 *
 * `write` gets the batch and returns one outcome per item, in order; if it
 * throws, every caller of that batch gets the error. While the database is
 * away the batch waits for it (DatabaseHold) as long as its most patient
 * caller allows, and what arrives meanwhile gathers into the next batch.
 */
export class GroupCommit<I, O> {
  private queue: Pending<I, O>[] = [];
  private busy = false;

  constructor(
    private readonly write: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 500,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, deadline: databaseHold.deadline(), resolve, reject });
      if (this.queue.length === 1 && !this.busy) setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    const batch = this.queue.splice(0, this.maxBatch);
    try {
      // Not the first caller's context: the batch is everyone's, held as long as the most patient allows.
      const deadline = batch.some((pending) => pending.deadline === undefined)
        ? Infinity
        : Math.max(...batch.map((pending) => pending.deadline!));
      const outcomes = await databaseHold.until(deadline, () => this.write(batch.map((pending) => pending.item)));
      batch.forEach((pending, i) => pending.resolve(outcomes[i]));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      this.busy = false;
      if (this.queue.length > 0) setImmediate(() => void this.flush());
    }
  }
}
