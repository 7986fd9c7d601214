/** Items one write takes at most. */
const GROUP_MAX = 500;

interface Queued<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

export interface GroupWriterOptions {
  /**
   * Wait this long after the first item before writing (unless GROUP_MAX items
   * are queued first), to gather more: for writes nobody waits on, where a
   * statement of many rows costs far less per row than one of a few (0: write
   * at the next turn of the event loop).
   */
  gatherMs?: number;
}

/**
 * Group commit: items added while one write is on its way go together in the
 * next (`write`: one statement for the batch, returning each item's result in
 * order), and each `add` settles once its own write has. At the rate of the
 * calls this turns a statement (and a commit) per item into one per batch; with
 * one item at a time it costs a turn of the event loop (or `gatherMs`).
 */
export class GroupWriter<T, R> {
  private queue: Queued<T, R>[] = [];
  private writing = false;
  private scheduled = false;
  private gathering?: NodeJS.Timeout;

  constructor(
    private readonly write: (batch: T[]) => Promise<R[]>,
    private readonly options: GroupWriterOptions = {},
  ) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.writing) return;
    const gatherMs = this.options.gatherMs ?? 0;
    if (gatherMs > 0 && this.queue.length < GROUP_MAX) {
      this.gathering ??= setTimeout(() => void this.flush(), gatherMs);
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    clearTimeout(this.gathering);
    this.gathering = undefined;
    // The timer and the turn of the loop can both come due: the write under way takes the rest next.
    if (this.writing) return;
    const batch = this.queue.splice(0, GROUP_MAX);
    if (batch.length === 0) return;
    this.writing = true;
    try {
      const results = await this.write(batch.map((queued) => queued.item));
      batch.forEach((queued, i) => queued.resolve(results[i]));
    } catch (error) {
      for (const queued of batch) queued.reject(error);
    } finally {
      this.writing = false;
      if (this.queue.length) this.schedule();
    }
  }
}
