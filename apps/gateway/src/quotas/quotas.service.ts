import { Inject, Injectable } from '@nestjs/common';
import { Counter, type Registry } from 'prom-client';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { QuotaGossipService } from './quota-gossip.service';
import { QuotaLimitsService } from './quota-limits.service';
import { quotaRefusal, type QuotaRefusal } from './quota-refusal';
import type { QuotaLimitName } from './quota-limits';

/** Admitted: hold it, and `release` it exactly when the work ends (it may be called more than once). */
export type Admission = { ok: true; release(): void } | { ok: false; refusal: QuotaRefusal };

/**
 * The quotas of each principal (an API key, or a grant's task) of an agent:
 * calls in flight and calls per second (both surfaces), open GET streams
 * (surface A), each enforced against this replica's live count plus what
 * the other replicas last gossiped; open sessions are counted by PostgreSQL
 * where they live (`SessionsService`). Rules and slack: README.md here.
 */
@Injectable()
export class QuotasService {
  private readonly refusals: Counter<'limit'>;

  constructor(
    private readonly limits: QuotaLimitsService,
    private readonly gossip: QuotaGossipService,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.refusals = new Counter({
      name: 'mcpgw_quota_refusals_total',
      help: 'Requests refused with HTTP 429 because a principal was over a quota, by limit',
      labelNames: ['limit'],
      registers: [registry],
    });
  }

  /** `n` agent round trips (tools/call, resources/read, prompts/get) at once: all of them, or none. */
  admitCalls(agentId: string, callerId: string, n = 1): Admission {
    const limits = this.limits.of(agentId);
    const principal = principalOf(agentId, callerId);
    const counters = this.gossip.counters;
    const now = counters.cluster(principal);
    if (limits.concurrent_calls && now.calls + n > limits.concurrent_calls)
      return this.refuse('concurrent_calls', limits.concurrent_calls, callerId);
    if (limits.calls_per_second && now.rate + n > limits.calls_per_second)
      return this.refuse('calls_per_second', limits.calls_per_second, callerId);
    counters.startCalls(principal, n);
    return { ok: true, release: once(() => counters.endCalls(principal, n)) };
  }

  /** A GET stream opens: release it when the stream closes. */
  admitStream(agentId: string, callerId: string): Admission {
    const max = this.limits.of(agentId).streams;
    const principal = principalOf(agentId, callerId);
    const counters = this.gossip.counters;
    if (max && counters.cluster(principal).streams + 1 > max) return this.refuse('streams', max, callerId);
    counters.openStream(principal);
    return { ok: true, release: once(() => counters.closeStream(principal)) };
  }

  /** The most sessions a key of this agent may hold open (0: no limit); enforced by `SessionsService.create`. */
  sessionLimit(agentId: string): number {
    return this.limits.of(agentId).sessions;
  }

  /** A session refused by `SessionsService.create`: counted here, answered by the surface. */
  sessionRefusal(agentId: string, callerId: string): QuotaRefusal {
    this.refusals.inc({ limit: 'sessions' });
    return quotaRefusal('sessions', this.sessionLimit(agentId), callerId);
  }

  private refuse(limit: QuotaLimitName, max: number, callerId: string): Admission {
    this.refusals.inc({ limit });
    return { ok: false, refusal: quotaRefusal(limit, max, callerId) };
  }
}

/** What the counters are keyed by: the caller within its agent (limits are per agent). */
export function principalOf(agentId: string, callerId: string): string {
  return `${agentId}/${callerId}`;
}

function once(release: () => void): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
  };
}
