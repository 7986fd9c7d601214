import { describe, expect, it, vi } from 'vitest';
import { retry } from './retry';

describe('retry', () => {
  it('tries again with doubling waits until the work succeeds', async () => {
    const work = vi
      .fn()
      .mockRejectedValueOnce(new Error('1'))
      .mockRejectedValueOnce(new Error('2'))
      .mockResolvedValue('ok');
    const onRetry = vi.fn();
    await expect(retry(work, { firstDelayMs: 1, onRetry })).resolves.toBe('ok');
    expect(work).toHaveBeenCalledTimes(3);
    expect(onRetry.mock.calls.map(([, attempt]) => attempt)).toEqual([1, 2]);
  });

  it('throws the last error once the attempts are used up', async () => {
    let n = 0;
    const work = () => Promise.reject(new Error(`failure ${++n}`));
    await expect(retry(work, { attempts: 3, firstDelayMs: 1 })).rejects.toThrow('failure 3');
  });

  it('does not retry an error retryIf refuses', async () => {
    const work = vi.fn().mockRejectedValue(new Error('permanent'));
    await expect(retry(work, { firstDelayMs: 1, retryIf: () => false })).rejects.toThrow('permanent');
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('tries once with an aborted signal, and stops waiting when the signal aborts', async () => {
    const stop = new AbortController();
    stop.abort();
    const once = vi.fn().mockRejectedValue(new Error('down'));
    await expect(retry(once, { firstDelayMs: 1, signal: stop.signal })).rejects.toThrow('down');
    expect(once).toHaveBeenCalledTimes(1);

    const later = new AbortController();
    const work = vi.fn().mockRejectedValue(new Error('still down'));
    const tried = retry(work, { firstDelayMs: 60_000, signal: later.signal });
    await vi.waitFor(() => expect(work).toHaveBeenCalledTimes(1));
    later.abort();
    await expect(tried).rejects.toThrow('still down');
    expect(work).toHaveBeenCalledTimes(1);
  });
});
