import { describe, expect, it } from 'vitest';
import { resolveSettings } from './agent-options';

describe('resolveSettings: presence and the pod id', () => {
  it('beats every 15 s unless PRESENCE_INTERVAL_MS or the option says otherwise', () => {
    expect(resolveSettings({ agentId: 'a' }, {}).presenceIntervalMs).toBe(15_000);
    expect(resolveSettings({ agentId: 'a' }, { PRESENCE_INTERVAL_MS: '500' }).presenceIntervalMs).toBe(500);
    expect(
      resolveSettings({ agentId: 'a', presenceIntervalMs: 700 }, { PRESENCE_INTERVAL_MS: '500' }).presenceIntervalMs,
    ).toBe(700);
  });

  it('refuses an interval out of bounds, naming it, and a pod id outside the contract alphabet', () => {
    for (const value of ['99', '600001', 'soon', '1.5'])
      expect(() => resolveSettings({ agentId: 'a' }, { PRESENCE_INTERVAL_MS: value })).toThrow(/PRESENCE_INTERVAL_MS/);
    expect(() => resolveSettings({ agentId: 'a', presenceIntervalMs: 10_000_000 }, {})).toThrow(/PRESENCE_INTERVAL_MS/);
    expect(() => resolveSettings({ agentId: 'a', podId: 'a b' }, {})).toThrow(/podId/);
    expect(resolveSettings({ agentId: 'a', podId: 'host.local-12' }, {}).podId).toBe('host.local-12');
  });
});
