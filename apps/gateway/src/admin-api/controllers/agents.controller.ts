import { Controller, Get, Param } from '@nestjs/common';
import { AgentsStore } from '../../agents/agents.store';
import { PodsStore } from '../../agents/pods.store';
import {
  agentsOnline,
  listAgents,
  showAgent,
  type AgentDetail,
  type AgentListRow,
} from '../../admin/operations/agents';

/** Agents and their catalogues (the CLI's `agent list`), with their pods. */
@Controller('admin/v1/agents')
export class AgentsController {
  constructor(
    private readonly agents: AgentsStore,
    private readonly pods: PodsStore,
  ) {}

  /** Every agent, and `agents_online`: how many have a pod online now (the overview's figure). */
  @Get()
  async list(): Promise<{ items: AgentListRow[]; agents_online: number }> {
    const items = await listAgents(this.agents, this.pods);
    return { items, agents_online: agentsOnline(items) };
  }

  @Get(':agentId')
  show(@Param('agentId') agentId: string): Promise<AgentDetail> {
    return showAgent(this.agents, this.pods, agentId);
  }
}
