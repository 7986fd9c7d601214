import type { FinishedAttempt } from './webhook-deliveries.store';

/** Attempts recorded at most per statement. */
const GROUP_MAX = 500;

interface Queued {
  done: FinishedAttempt;
  resolve(recorded: boolean): void;
  reject(error: unknown): void;
}

/**
 * Records attempts many at a time: those that end while one write is on its
 * way go together in the next (`finishMany`, one statement), and each
 * attempt's promise settles once its own record is committed (true), or its
 * lease was no longer the recorder's (false). At the load of a busy agent
 * this turns a transaction per delivery into one per batch.
 */
export class AttemptLog {
  private queue: Queued[] = [];
  private writing = false;
  private scheduled = false;

  constructor(private readonly finishMany: (done: FinishedAttempt[]) => Promise<Set<string>>) {}

  add(done: FinishedAttempt): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ done, resolve, reject });
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
      const recorded = await this.finishMany(batch.map((queued) => queued.done));
      for (const queued of batch) queued.resolve(recorded.has(queued.done.id));
    } catch (error) {
      for (const queued of batch) queued.reject(error);
    } finally {
      this.writing = false;
      if (this.queue.length) this.schedule();
    }
  }
}
