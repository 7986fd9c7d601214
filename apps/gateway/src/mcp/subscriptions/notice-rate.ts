/**
 * Each agent's own notices (resource updates) reach every gateway replica, and
 * each one is written to every listen stream and session that watches the
 * agent. An agent may not turn that fan-out into a flood: each replica lets
 * through at most `perSecond` of one agent's notices a second (a token bucket
 * with a burst of `burst`), and drops the rest (counted in
 * `mcpgw_bus_dropped_total{family="agents.*.notices"}`). A resource that
 * changes faster than that loses nothing a client needs: the notice says
 * "read it again", and the next one that passes says it too.
 */
export class NoticeRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond = 100,
    private readonly burst = 200,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when this agent's notice may pass now (and takes its token). */
  admit(agentId: string): boolean {
    const now = this.now();
    const bucket = this.buckets.get(agentId) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(agentId, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}
