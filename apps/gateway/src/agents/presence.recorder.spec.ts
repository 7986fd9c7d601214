import { describe, expect, it } from 'vitest';
import type { BusClient } from '@mcpgw/bus';
import { AGENT_PODS_MAX, type Heartbeat, type PodsStore } from './pods.store';
import { PRESENCE_PENDING_MAX, PresenceRecorder } from './presence.recorder';

/**
 * The recorder's memory between writes (the writes themselves, on PostgreSQL, are
 * tested in test/agent-pods.e2e.spec.ts): one entry per pod, the newest wins,
 * and no agent holds more than AGENT_PODS_MAX however many pod ids it makes up.
 */
describe('PresenceRecorder', () => {
  const recorder = () => {
    const written: Heartbeat[][] = [];
    const pods = { heartbeats: async (beats: Heartbeat[]) => void written.push(beats) } as unknown as PodsStore;
    return { recorder: new PresenceRecorder({} as BusClient, pods), written };
  };
  const beat = (pod_id: string, state: 'up' | 'leaving' = 'up') => ({ pod_id, state, interval_ms: 1_000 });

  it('coalesces heartbeats per pod into one write, the newest state winning', async () => {
    const { recorder: r, written } = recorder();
    for (let i = 0; i < 10; i++) r.heard('a1', beat('p1'));
    r.heard('a1', beat('p1', 'leaving'));
    r.heard('a1', beat('p2'));
    r.heard('a2', beat('p1'));
    await r.flush();
    expect(written).toHaveLength(1);
    expect(written[0].map((b) => [b.agent_id, b.pod_id, b.state])).toEqual([
      ['a1', 'p1', 'leaving'],
      ['a1', 'p2', 'up'],
      ['a2', 'p1', 'up'],
    ]);
    await r.flush();
    expect(written).toHaveLength(1);
  });

  it('holds at most AGENT_PODS_MAX pods of one agent, and PRESENCE_PENDING_MAX in all, between writes', async () => {
    const { recorder: r, written } = recorder();
    for (let i = 0; i < AGENT_PODS_MAX * 4; i++) r.heard('flood', beat(`p${i}`));
    r.heard('other', beat('p0'));
    await r.flush();
    const flood = written[0].filter((b) => b.agent_id === 'flood');
    expect(flood).toHaveLength(AGENT_PODS_MAX);
    expect(written[0].some((b) => b.agent_id === 'other')).toBe(true);
    for (let a = 0; a * AGENT_PODS_MAX < PRESENCE_PENDING_MAX + 1_000; a++)
      for (let i = 0; i < AGENT_PODS_MAX; i++) r.heard(`agent-${a}`, beat(`p${i}`));
    await r.flush();
    expect(written[1]).toHaveLength(PRESENCE_PENDING_MAX);
  });

  it('drops a heartbeat whose subject named no agent', async () => {
    const { recorder: r, written } = recorder();
    r.heard(undefined, beat('p1'));
    await r.flush();
    expect(written).toEqual([]);
  });
});
