import { InvalidRequestError, NotFoundError, type SkillDefinition } from '@mcpgw/contracts';
import {
  A2A_CARD_VISIBILITIES,
  type A2aCardVisibility,
  type AgentExtras,
  type AgentRow,
  type AgentsStore,
  type AuthMethods,
} from '../../agents/agents.store';
import type { PodView, PodsStore } from '../../agents/pods.store';

/**
 * What an operator does with agents, once for both faces: the admin CLI
 * (admin/commands.ts) and the management API (admin-api/). Each face only
 * reads its input (flags, JSON) and shapes its output.
 */

export interface AgentTool {
  id: string;
  name: string;
  /** The skill as the agent registered it (input_schema and the rest). */
  definition: SkillDefinition;
}

export interface AgentDetail extends Omit<AgentRow, 'tools'> {
  auth_methods: AuthMethods;
  tools: AgentTool[];
  resources: AgentExtras['resources'];
  resource_templates: AgentExtras['resource_templates'];
  prompts: AgentExtras['prompts'];
  completions: boolean;
  /** The agent's pods (at most 256, the most recently seen first), each online or not. */
  pods: PodView[];
  /** When a pod of the agent last registered, or null when none is known (none ever, or none for a day). */
  last_registered_at: string | null;
}

/** An agent in the list, with how many of its pods are online now. */
export interface AgentListRow extends AgentRow {
  pods_online: number;
}

export async function listAgents(agents: AgentsStore, pods: PodsStore): Promise<AgentListRow[]> {
  const [rows, online] = await Promise.all([agents.list(), pods.onlineCounts()]);
  return rows.map((row) => ({ ...row, pods_online: online.get(row.id) ?? 0 }));
}

/** Agents with at least one pod online (the overview's "agents online"). */
export function agentsOnline(rows: readonly AgentListRow[]): number {
  return rows.filter((row) => row.pods_online > 0).length;
}

/** The agent, or NotFoundError: for operations that make no sense on an unknown agent. */
export async function requireAgent(agents: AgentsStore, agentId: string): Promise<AgentRow> {
  const agent = await agents.find(agentId);
  if (!agent) throw new NotFoundError(`no agent ${agentId}`);
  return agent;
}

/**
 * One agent with its catalogue: tools (with their schemas), resources, prompts,
 * how callers may authenticate, and its pods (online or not, last registration).
 */
export async function showAgent(agents: AgentsStore, pods: PodsStore, agentId: string): Promise<AgentDetail> {
  const agent = await requireAgent(agents, agentId);
  const [tools, extras, authMethods, podViews] = await Promise.all([
    agents.tools(agentId),
    agents.extras(agentId),
    agents.authMethods(agentId),
    pods.pods(agentId),
  ]);
  const registered = podViews.map((pod) => pod.registered_at).sort();
  return {
    ...agent,
    auth_methods: authMethods,
    tools: tools.map((tool) => ({ id: tool.id, name: tool.name, definition: tool.definition })),
    resources: extras.resources,
    resource_templates: extras.resource_templates,
    prompts: extras.prompts,
    completions: extras.completions,
    pods: podViews,
    last_registered_at: registered.at(-1) ?? null,
  };
}

export interface A2aCardView {
  agent_id: string;
  a2a_card: A2aCardVisibility;
}

/** Who may read the agent's A2A card (a2a/README.md); with `value`, set it first. */
export async function agentA2aCard(agents: AgentsStore, agentId: string, value?: string): Promise<A2aCardView> {
  await requireAgent(agents, agentId);
  if (value !== undefined && !(A2A_CARD_VISIBILITIES as readonly string[]).includes(value))
    throw new InvalidRequestError(`a2a-card: one of ${A2A_CARD_VISIBILITIES.join(', ')}`);
  const visibility =
    value === undefined ? await agents.a2aCard(agentId) : await agents.setA2aCard(agentId, value as A2aCardVisibility);
  if (!visibility) throw new NotFoundError(`no agent ${agentId}`);
  return { agent_id: agentId, a2a_card: visibility };
}
