import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { GroupWriter } from './group-writer';

/** A writer that records each batch and takes `ms` to write it. */
function recording(ms = 5) {
  const batches: number[][] = [];
  const write = async (batch: number[]) => {
    batches.push(batch);
    await sleep(ms);
    return batch.map((n) => n * 10);
  };
  return { batches, write };
}

describe('GroupWriter', () => {
  it('writes what arrives meanwhile in the next batch, and answers each item', async () => {
    const { batches, write } = recording();
    const writer = new GroupWriter(write);
    const first = writer.add(1);
    await sleep(1); // the first write is under way
    const rest = [2, 3, 4].map((n) => writer.add(n));
    expect(await Promise.all([first, ...rest])).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('with gatherMs, waits that long after the first item and writes them all at once', async () => {
    const { batches, write } = recording();
    const writer = new GroupWriter(write, { gatherMs: 40 });
    const started = Date.now();
    const answers = [writer.add(1)];
    for (const n of [2, 3, 4]) {
      await sleep(5);
      answers.push(writer.add(n));
    }
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([[1, 2, 3, 4]]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
  });

  it('with gatherMs, a full batch does not wait', async () => {
    const { batches, write } = recording(1);
    const writer = new GroupWriter(write, { gatherMs: 10_000 });
    const answers = Array.from({ length: 500 }, (_, n) => writer.add(n));
    await Promise.all(answers);
    expect(batches.map((b) => b.length)).toEqual([500]);
  });

  it('a failed write rejects its own items only', async () => {
    let calls = 0;
    const writer = new GroupWriter<number, number>(async (batch) => {
      calls += 1;
      if (calls === 1) throw new Error('down');
      return batch;
    });
    const first = writer.add(1);
    await expect(first).rejects.toThrow('down');
    await expect(writer.add(2)).resolves.toBe(2);
  });
});
