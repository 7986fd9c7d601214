/** Items one write takes at most. */
const GROUP_MAX = 500;

interface Queued<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit: items added while one write is on its way go together in the
 * next (`write`: one statement for the batch, returning each item's result in
 * order), and each `add` settles once its own write has. At the rate of the
 * calls this turns a statement (and a commit) per item into one per batch; with
 * one item at a time it costs a turn of the event loop.
 */
export class GroupWriter<T, R> {
  private queue: Queued<T, R>[] = [];
  private writing = false;
  private scheduled = false;

  constructor(private readonly write: (batch: T[]) => Promise<R[]>) {}

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.writing) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
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
