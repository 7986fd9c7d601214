import { Body, Controller, Get, Inject, Param, Patch } from '@nestjs/common';
import { AgentsStore } from '../../agents/agents.store';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { AgentQuotasStore } from '../../quotas/agent-quotas.store';
import { QUOTA_LIMITS, defaultLimits, type QuotaOverrides } from '../../quotas/quota-limits';
import { agentQuotas, type QuotaDeps, type QuotasView } from '../../admin/operations/quotas';
import { objectBody } from '../request-body';

/** An agent's quotas per API key and per grant task (the CLI's `agent quotas`). */
@Controller('admin/v1/agents/:agentId/quotas')
export class QuotasController {
  private readonly deps: QuotaDeps;

  constructor(agents: AgentsStore, quotas: AgentQuotasStore, @Inject(GATEWAY_ENV) env: GatewayEnv) {
    this.deps = { agents, quotas, quotaDefaults: defaultLimits(env) };
  }

  @Get()
  show(@Param('agentId') agentId: string): Promise<QuotasView> {
    return agentQuotas(this.deps, agentId);
  }

  /** Set some limits (a whole number, 0: no limit; null: back to the default); those not named stay. */
  @Patch()
  set(@Param('agentId') agentId: string, @Body() body: unknown): Promise<QuotasView> {
    return agentQuotas(this.deps, agentId, objectBody(body, QUOTA_LIMITS) as Partial<QuotaOverrides>);
  }
}
