import { InvalidRequestError } from '@mcpgw/contracts';
import type { AgentsStore } from '../../agents/agents.store';
import type { AgentQuotasStore } from '../../quotas/agent-quotas.store';
import {
  QUOTA_LIMITS,
  effectiveLimits,
  type QuotaLimitName,
  type QuotaLimits,
  type QuotaOverrides,
} from '../../quotas/quota-limits';
import { requireAgent } from './agents';

/** The highest limit an operator may set (0: no limit). */
export const QUOTA_MAX = 1_000_000;

export interface QuotasView {
  agent_id: string;
  /** What applies: the agent's own where set, else the default. */
  limits: QuotaLimits;
  /** The agent's own; null: the QUOTA_* default. */
  overrides: QuotaOverrides;
  defaults: QuotaLimits;
}

export interface QuotaDeps {
  agents: AgentsStore;
  quotas: AgentQuotasStore;
  /** The QUOTA_* defaults of this environment. */
  quotaDefaults: QuotaLimits;
}

/**
 * An agent's quotas per API key and per grant task; with `changes`, set them
 * first (null: back to the default; limits not named stay). Checked here, for
 * the CLI and the API alike.
 */
export async function agentQuotas(
  { agents, quotas, quotaDefaults }: QuotaDeps,
  agentId: string,
  changes: Partial<QuotaOverrides> = {},
): Promise<QuotasView> {
  await requireAgent(agents, agentId);
  for (const [name, value] of Object.entries(changes)) checkQuota(name, value);
  const row = Object.keys(changes).length ? await quotas.set(agentId, changes) : await quotas.find(agentId);
  const overrides = Object.fromEntries(QUOTA_LIMITS.map((name) => [name, row?.[name] ?? null])) as QuotaOverrides;
  return { agent_id: agentId, limits: effectiveLimits(quotaDefaults, overrides), overrides, defaults: quotaDefaults };
}

function checkQuota(name: string, value: unknown): asserts name is QuotaLimitName {
  if (!(QUOTA_LIMITS as readonly string[]).includes(name)) {
    throw new InvalidRequestError(`${name}: not a quota (known: ${QUOTA_LIMITS.join(', ')})`);
  }
  if (value === null) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > QUOTA_MAX) {
    throw new InvalidRequestError(
      `${name} must be a whole number 0-${QUOTA_MAX} (0: no limit), or null for the default`,
    );
  }
}
