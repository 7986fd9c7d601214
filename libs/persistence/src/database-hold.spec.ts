import { afterEach, describe, expect, it } from 'vitest';
import { CommitOutcomeUnknownError, DatabaseUnavailableError, HeldTooManyError } from './database-errors';
import { Deadline } from '@mcpgw/contracts';
import { DatabaseHold, NOT_HELD } from './database-hold';

/** An attempt that fails `times` times as unreachable, then answers `value`. */
function failing<T>(times: number, value: T, error: () => Error = () => new DatabaseUnavailableError()) {
  let calls = 0;
  const attempt = async () => {
    calls++;
    if (calls <= times) throw error();
    return value;
  };
  return { attempt, calls: () => calls };
}

describe('DatabaseHold', () => {
  let hold = new DatabaseHold();
  afterEach(() => {
    hold = new DatabaseHold();
  });

  it('tries again while the database is away, and answers once it is back', async () => {
    const work = failing(3, 'stored');
    await expect(hold.run(work.attempt)).resolves.toBe('stored');
    expect(work.calls()).toBe(4);
    expect({ held: hold.held, total: hold.heldTotal, retried: hold.retried }).toEqual({
      held: 0,
      total: 1,
      retried: 3,
    });
  });

  it('gives up at the deadline of the work it serves, with the database error', async () => {
    const work = failing(Infinity, 'never');
    const started = Date.now();
    await expect(hold.run(work.attempt, Deadline.after(300))).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(hold.expired).toBe(1);
  });

  it('gives up after DB_OUTAGE_HOLD_MS when no deadline is set', async () => {
    hold.configure({ maxHoldMs: 200 });
    const started = Date.now();
    await expect(hold.run(failing(Infinity, 'never').attempt)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect(Date.now() - started).toBeLessThan(800);
  });

  it('refuses at once beyond DB_OUTAGE_MAX_HELD', async () => {
    hold.configure({ maxHeld: 1 });
    const first = failing(2, 'first');
    const holding = hold.run(first.attempt);
    await expect(hold.run(failing(1, 'second').attempt)).rejects.toBeInstanceOf(HeldTooManyError);
    await expect(holding).resolves.toBe('first');
    expect(hold.refused).toBe(1);
  });

  it('never tries a COMMIT again whose outcome is unknown, nor an error that is not the database being away', async () => {
    const commit = failing(1, 'x', () => new CommitOutcomeUnknownError());
    await expect(hold.run(commit.attempt)).rejects.toBeInstanceOf(CommitOutcomeUnknownError);
    const wrong = failing(1, 'x', () => Object.assign(new Error('duplicate key'), { code: '23505' }));
    await expect(hold.run(wrong.attempt)).rejects.toThrow('duplicate key');
    expect([commit.calls(), wrong.calls(), hold.heldTotal]).toEqual([1, 1, 0]);
  });

  it('NOT_HELD fails at once (a readiness probe says so, it does not wait)', async () => {
    const work = failing(1, 'late');
    await expect(hold.run(work.attempt, NOT_HELD)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    expect([work.calls(), hold.heldTotal]).toEqual([1, 0]);
  });
});
