import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { METRICS_REGISTRY } from '@mcpgw/observability';
import { Gauge, type Registry } from 'prom-client';
import { CacheInvalidationService } from '../cache/cache-invalidation.service';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { AgentQuotasStore, type AgentQuotaRow } from './agent-quotas.store';
import { QUOTA_LIMITS, defaultLimits, effectiveLimits, type QuotaLimits, type QuotaOverrides } from './quota-limits';

/** The `agent` label of the defaults on `mcpgw_quota_limit`. */
const DEFAULTS_LABEL = '(default)';

/**
 * The limits of each agent, from memory: the QUOTA_* defaults and every
 * agent's overrides, loaded at start and kept current by the `quota:<agent>`
 * notices the admin CLI sends (read again in full after a lost notification
 * connection). No request waits on PostgreSQL for its limits.
 */
@Injectable()
export class QuotaLimitsService implements OnModuleInit {
  private readonly logger = new Logger(QuotaLimitsService.name);
  private readonly defaults: QuotaLimits;
  private overrides = new Map<string, QuotaOverrides>();

  constructor(
    private readonly store: AgentQuotasStore,
    @Inject(GATEWAY_ENV) env: GatewayEnv,
    invalidation: CacheInvalidationService,
    @Inject(METRICS_REGISTRY) registry: Registry,
  ) {
    this.defaults = defaultLimits(env);
    const inForce = () => [
      [DEFAULTS_LABEL, this.defaults] as const,
      ...[...this.overrides.keys()].map((agentId) => [agentId, this.of(agentId)] as const),
    ];
    new Gauge({
      name: 'mcpgw_quota_limit',
      help: 'Quota limits in force per API key / grant task (0: none): the defaults, and each agent with overrides',
      labelNames: ['agent', 'limit'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [agent, limits] of inForce())
          for (const limit of QUOTA_LIMITS) this.set({ agent, limit }, limits[limit]);
      },
    });
    invalidation.on('quota', (agentId) => (agentId ? void this.refresh(agentId) : void this.reload()));
  }

  async onModuleInit(): Promise<void> {
    await this.reload();
  }

  of(agentId: string): QuotaLimits {
    return effectiveLimits(this.defaults, this.overrides.get(agentId));
  }

  private async refresh(agentId: string): Promise<void> {
    try {
      const row = await this.store.find(agentId);
      if (row) this.overrides.set(agentId, overridesOf(row));
      else this.overrides.delete(agentId);
    } catch (error) {
      this.logger.warn(`reading the quotas of ${agentId}: ${(error as Error).message}`);
    }
  }

  private async reload(): Promise<void> {
    try {
      const rows = await this.store.list();
      this.overrides = new Map(rows.map((row) => [row.agent_id, overridesOf(row)]));
    } catch (error) {
      // The overrides held so far stay in force until a reload works.
      this.logger.warn(`loading quota overrides: ${(error as Error).message}`);
    }
  }
}

function overridesOf({ agent_id: _agent, ...overrides }: AgentQuotaRow): QuotaOverrides {
  return overrides;
}
