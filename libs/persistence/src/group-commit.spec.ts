import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HoldDeadline } from './database-hold';
import { GroupCommit } from './group-commit';

describe('GroupCommit', () => {
  it('writes everything submitted in one turn as one batch, answering each caller in order', async () => {
    const batches: number[][] = [];
    const writer = new GroupCommit<number, number>(async (items) => {
      batches.push(items);
      return items.map((n) => n * 10);
    });
    const answers = await Promise.all([1, 2, 3].map((n) => writer.submit(n)));
    expect(answers).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('gathers what arrives while a batch is written into the next one', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const firstWritten = new Promise<void>((resolve) => (release = resolve));
    const writer = new GroupCommit<number, number>(async (items) => {
      batches.push(items);
      if (batches.length === 1) await firstWritten;
      return items;
    });
    const first = writer.submit(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [2, 3, 4].map((n) => writer.submit(n));
    release();
    await Promise.all([first, ...later]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('fails every caller of a failed batch, and keeps writing after it', async () => {
    let fail = true;
    const writer = new GroupCommit<number, number>(async (items) => {
      if (fail) throw new Error('database down');
      return items;
    });
    const failed = [writer.submit(1), writer.submit(2)];
    await expect(Promise.all(failed)).rejects.toThrow('database down');
    await expect(failed[1]).rejects.toThrow('database down');
    fail = false;
    await expect(writer.submit(3)).resolves.toBe(3);
  });

  it('with gatherMs, waits that long after the first item and writes them all at once', async () => {
    const batches: number[][] = [];
    const writer = new GroupCommit<number, number>(async (items) => (batches.push(items), items.map((n) => n * 10)), {
      gatherMs: 40,
    });
    const started = Date.now();
    const answers = [writer.submit(1)];
    for (const n of [2, 3, 4]) {
      await sleep(5);
      answers.push(writer.submit(n));
    }
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1, 2, 3, 4]]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
  });

  it('with gatherMs, a full batch does not wait', async () => {
    const sizes: number[] = [];
    const writer = new GroupCommit<number, number>(async (items) => (sizes.push(items.length), items), {
      maxBatch: 500,
      gatherMs: 10_000,
    });
    const started = Date.now();
    await Promise.all(Array.from({ length: 500 }, (_, n) => writer.submit(n)));
    expect(sizes).toEqual([500]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('with gatherMs, what waited for the write before it has had its gathering: written next, at once', async () => {
    const batches: number[][] = [];
    const writer = new GroupCommit<number, number>(
      async (items) => {
        batches.push(items);
        if (batches.length === 1) await sleep(300);
        return items;
      },
      { gatherMs: 200 },
    );
    const started = Date.now();
    const first = writer.submit(1);
    await sleep(250); // the first batch is being written (from 200 ms to 500 ms)
    const second = writer.submit(2);
    await Promise.all([first, second]);
    expect(batches).toEqual([[1], [2]]);
    // Gathered from its own submission (250 ms), not again after the first write (500 + 200 ms).
    expect(Date.now() - started).toBeLessThan(650);
  });

  it('caps a batch', async () => {
    const sizes: number[] = [];
    const writer = new GroupCommit<number, number>(async (items) => (sizes.push(items.length), items), {
      maxBatch: 2,
    });
    await Promise.all([1, 2, 3, 4, 5].map((n) => writer.submit(n)));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it("holds a batch for the database as long as its most patient caller's deadline, not the first caller's", async () => {
    const deadlines: (HoldDeadline | undefined)[] = [];
    const writer = new GroupCommit<number, number>(async (items, deadline) => (deadlines.push(deadline), items));
    const soon = { remainingMs: () => 1_000 };
    const later = { remainingMs: () => 5_000 };
    await Promise.all([writer.submit(1, soon), writer.submit(2, later), writer.submit(3, soon)]);
    expect(deadlines).toEqual([later]);
    // A caller with no deadline of its own: DB_OUTAGE_HOLD_MS applies to the batch.
    await Promise.all([writer.submit(4, soon), writer.submit(5)]);
    expect(deadlines).toEqual([later, undefined]);
  });
});
