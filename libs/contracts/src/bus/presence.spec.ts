import { describe, expect, it } from 'vitest';
import { checkPresence } from './presence';
import { POD_ID_PATTERN } from './subjects';

describe('checkPresence (what a pod says of itself)', () => {
  it('takes up and leaving, with a pod id and an interval', () => {
    expect(checkPresence({ pod_id: 'host.local-123', state: 'up', interval_ms: 15_000 }).ok).toBe(true);
    expect(checkPresence({ pod_id: 'p', state: 'leaving', interval_ms: 15_000 }).ok).toBe(true);
  });

  it('refuses ids outside the alphabet, unknown states and intervals out of bounds', () => {
    for (const bad of [
      { pod_id: 'a b', state: 'up', interval_ms: 1000 },
      { pod_id: '', state: 'up', interval_ms: 1000 },
      { pod_id: 'p'.repeat(201), state: 'up', interval_ms: 1000 },
      { pod_id: 'p', state: 'gone', interval_ms: 1000 },
      { pod_id: 'p', state: 'up', interval_ms: 99 },
      { pod_id: 'p', state: 'up', interval_ms: 600_001 },
      { pod_id: 'p', state: 'up', interval_ms: 1.5 },
      { pod_id: 'p', state: 'up' },
    ])
      expect(checkPresence(bad).ok, JSON.stringify(bad)).toBe(false);
  });

  it('keeps pod ids to subject-safe, printable characters', () => {
    expect(POD_ID_PATTERN.test('gateway-7d9f-abc.cluster.local:1')).toBe(true);
    for (const bad of ['.x', 'a*b', 'a>b', 'a\nb', 'ä']) expect(POD_ID_PATTERN.test(bad), bad).toBe(false);
  });
});
