import { Controller, Get, Param } from '@nestjs/common';
import { AgentsStore, type AgentRow } from '../../agents/agents.store';
import { listAgents, showAgent, type AgentDetail } from '../../admin/operations/agents';

/** Agents and their catalogues (the CLI's `agent list`). */
@Controller('admin/v1/agents')
export class AgentsController {
  constructor(private readonly agents: AgentsStore) {}

  @Get()
  async list(): Promise<{ items: AgentRow[] }> {
    return { items: await listAgents(this.agents) };
  }

  @Get(':agentId')
  show(@Param('agentId') agentId: string): Promise<AgentDetail> {
    return showAgent(this.agents, agentId);
  }
}
