import { NotFoundError, type SkillDefinition } from '@mcpgw/contracts';
import type { AgentExtras, AgentRow, AgentsStore, AuthMethods } from '../../agents/agents.store';

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
}

export function listAgents(agents: AgentsStore): Promise<AgentRow[]> {
  return agents.list();
}

/** The agent, or NotFoundError: for operations that make no sense on an unknown agent. */
export async function requireAgent(agents: AgentsStore, agentId: string): Promise<AgentRow> {
  const agent = await agents.find(agentId);
  if (!agent) throw new NotFoundError(`no agent ${agentId}`);
  return agent;
}

/** One agent with its catalogue: tools (with their schemas), resources, prompts, and how callers may authenticate. */
export async function showAgent(agents: AgentsStore, agentId: string): Promise<AgentDetail> {
  const agent = await requireAgent(agents, agentId);
  const [tools, extras, authMethods] = await Promise.all([
    agents.tools(agentId),
    agents.extras(agentId),
    agents.authMethods(agentId),
  ]);
  return {
    ...agent,
    auth_methods: authMethods,
    tools: tools.map((tool) => ({ id: tool.id, name: tool.name, definition: tool.definition })),
    resources: extras.resources,
    resource_templates: extras.resource_templates,
    prompts: extras.prompts,
    completions: extras.completions,
  };
}
