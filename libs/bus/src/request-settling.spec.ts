import { NatsError } from 'nats';
import { RequestOne } from 'nats/lib/nats-base-client/request';
import type { MuxSubscription } from 'nats/lib/nats-base-client/muxsubscription';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { settleRequestsQuietly } from './request-settling';

/** A request on a stand-in reply multiplexer that records what it cancels. */
function request() {
  const cancelled: string[] = [];
  const mux = { cancel: (r: RequestOne) => void cancelled.push(r.token) } as unknown as MuxSubscription;
  const r = new RequestOne(mux, 'svc.op', { timeout: 60_000 }, false);
  return { r, cancelled };
}

describe('settleRequestsQuietly', () => {
  afterEach(() => vi.restoreAllMocks());

  it('settles an answered request without building an error, and takes it off the multiplexer', async () => {
    settleRequestsQuietly();
    const errors = vi.spyOn(NatsError, 'errorForCode');
    const { r, cancelled } = request();
    const answer = { data: new Uint8Array([1]) } as never;
    r.resolver(null, answer);
    await expect(r.deferred).resolves.toBe(answer);
    expect(cancelled).toEqual([r.token]);
    expect(errors).not.toHaveBeenCalled();
  });

  it('rejects a request with the error it was given', async () => {
    settleRequestsQuietly();
    const { r, cancelled } = request();
    const error = new NatsError('503', '503');
    r.resolver(error, {} as never);
    await expect(r.deferred).rejects.toBe(error);
    expect(cancelled).toEqual([r.token]);
  });

  it('is installed once, however many connections are made', () => {
    settleRequestsQuietly();
    const installed = RequestOne.prototype.resolver;
    settleRequestsQuietly();
    expect(RequestOne.prototype.resolver).toBe(installed);
  });
});
