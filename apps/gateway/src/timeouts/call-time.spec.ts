import { describe, expect, it } from 'vitest';
import { CallTime, TIMEOUT_META_KEY, callTimeout } from './call-time';

const env = { CALL_TIMEOUT_MS: 1_000, CALL_TIMEOUT_MAX_MS: 5_000 };

describe('CallTime', () => {
  it.each([
    [undefined, 1_000],
    [{}, 1_000],
    [{ [TIMEOUT_META_KEY]: 'soon' }, 1_000],
    [{ [TIMEOUT_META_KEY]: -3 }, 1_000],
    [{ [TIMEOUT_META_KEY]: 20 }, 100],
    [{ [TIMEOUT_META_KEY]: 2_500.7 }, 2_500],
    [{ [TIMEOUT_META_KEY]: 60_000 }, 5_000],
  ])('reads _meta %j as a timeout of %i ms', (meta, expected) => {
    expect(callTimeout(meta, env.CALL_TIMEOUT_MS, env.CALL_TIMEOUT_MAX_MS)).toBe(expected);
    expect(CallTime.accept(meta, env).timeoutMs).toBe(expected);
  });

  it('fixes the deadline and the limit when the call is accepted', () => {
    const time = CallTime.accept({ [TIMEOUT_META_KEY]: 2_000 }, env);
    expect(time.deadline.remainingMs()).toBeGreaterThan(1_950);
    expect(time.deadline.remainingMs()).toBeLessThanOrEqual(2_000);
    expect(time.limit.remainingMs()).toBeGreaterThan(4_950);
  });

  it("gives the agent the caller's deadline, or the limit when the reply outlives the wait", () => {
    const time = CallTime.of(1_000, env);
    expect(time.agentDeadline({ watched: false, keepsResult: false })).toBe(time.deadline);
    expect(time.agentDeadline({ watched: true, keepsResult: false })).toBe(time.limit);
    expect(time.agentDeadline({ watched: false, keepsResult: true })).toBe(time.limit);
  });

  it('waits in slices of what is left', () => {
    const time = CallTime.of(3_000, env);
    expect(time.nextWaitMs(1_000)).toBe(1_000);
    expect(time.nextWaitMs(10_000)).toBeGreaterThan(2_950);
    expect(CallTime.none().nextWaitMs(1_000)).toBe(0);
    expect(CallTime.none().deadline.expired).toBe(true);
  });

  it('extends a watched wait by the time left since the last event, within the limit', () => {
    const time = CallTime.of(1_000, env);
    expect(time.waitWhileAliveMs(1_000)).toBe(0);
    expect(time.waitWhileAliveMs(1_200)).toBe(0);
    expect(time.waitWhileAliveMs(400)).toBe(600);
    expect(CallTime.none().waitWhileAliveMs(0)).toBe(0);
  });

  it('never lets the limit come before the deadline', () => {
    const time = CallTime.of(9_000, env);
    expect(time.limit.remainingMs()).toBeGreaterThan(8_950);
  });
});
