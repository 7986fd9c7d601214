import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ClusterCounters } from './cluster-counters';
import type { QuotaGossipService } from './quota-gossip.service';
import type { QuotaLimits } from './quota-limits';
import type { QuotaLimitsService } from './quota-limits.service';
import { QuotasService, principalOf } from './quotas.service';

function quotas(limits: Partial<QuotaLimits>) {
  const all: QuotaLimits = { concurrent_calls: 0, calls_per_second: 0, sessions: 0, streams: 0, ...limits };
  const counters = new ClusterCounters(3_000);
  const registry = new Registry();
  const service = new QuotasService(
    { of: () => all } as unknown as QuotaLimitsService,
    { counters } as unknown as QuotaGossipService,
    registry,
  );
  const refusals = async () => (await registry.getSingleMetric('mcpgw_quota_refusals_total')!.get()).values;
  return { service, counters, refusals };
}

describe('QuotasService', () => {
  it('admits n calls together or none, and releases each admission once', () => {
    const { service, counters } = quotas({ concurrent_calls: 3 });
    const two = service.admitCalls('a', 'apikey:k', 2);
    expect(two.ok).toBe(true);
    const refused = service.admitCalls('a', 'apikey:k', 2);
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.refusal.data).toEqual({ limit: 'concurrent_calls', max: 3, retry_after_seconds: 1 });
    expect(counters.cluster(principalOf('a', 'apikey:k')).calls).toBe(2);
    if (two.ok) {
      two.release();
      two.release();
    }
    expect(counters.cluster(principalOf('a', 'apikey:k')).calls).toBe(0);
  });

  it('counts against what other replicas gossiped', () => {
    const { service, counters } = quotas({ concurrent_calls: 2, streams: 1 });
    counters.hear('other', [[principalOf('a', 'task:w/t'), 2, 1, 2]]);
    const call = service.admitCalls('a', 'task:w/t');
    expect(call.ok).toBe(false);
    if (!call.ok) expect(call.refusal.message).toMatch(/per task/);
    expect(service.admitStream('a', 'task:w/t').ok).toBe(false);
    expect(service.admitCalls('a', 'task:w/other').ok).toBe(true);
  });

  it('0 is no limit', () => {
    const { service } = quotas({});
    for (let i = 0; i < 1_000; i++) expect(service.admitCalls('a', 'apikey:k').ok).toBe(true);
    expect(service.admitStream('a', 'apikey:k').ok).toBe(true);
  });

  it('counts refusals by limit', async () => {
    const { service, refusals } = quotas({ calls_per_second: 1 });
    expect(service.admitCalls('a', 'apikey:k').ok).toBe(true);
    expect(service.admitCalls('a', 'apikey:k').ok).toBe(false);
    service.sessionRefusal('a', 'apikey:k');
    expect(await refusals()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { limit: 'calls_per_second' }, value: 1 }),
        expect.objectContaining({ labels: { limit: 'sessions' }, value: 1 }),
      ]),
    );
  });
});
