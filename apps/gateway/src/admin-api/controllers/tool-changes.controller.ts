import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Req } from '@nestjs/common';
import { AgentsStore } from '../../agents/agents.store';
import { AuditTrail } from '../../audit/audit-trail.service';
import { GATEWAY_ENV, type GatewayEnv } from '../../config/gateway.env';
import { ToolChangesStore } from '../../tool-pinning/tool-changes.store';
import {
  agentToolChangePolicy,
  decideToolChange,
  listToolChanges,
  type ToolChangeDeps,
  type ToolChangeDetail,
  type ToolChangePolicyView,
} from '../../admin/operations/tool-changes';
import type { AdminRequest } from '../admin-token.guard';
import { objectBody } from '../request-body';
import { knownQuery } from '../request-query';

/** Tool pinning (the CLI's `tools changes|approve|reject`, `agent update --tool-changes`). */
@Controller('admin/v1')
export class ToolChangesController {
  private readonly deps: ToolChangeDeps;

  constructor(
    agents: AgentsStore,
    toolChanges: ToolChangesStore,
    trail: AuditTrail,
    @Inject(GATEWAY_ENV) env: GatewayEnv,
  ) {
    this.deps = { agents, toolChanges, defaultPolicy: env.TOOL_CHANGES, trail };
  }

  /** Changes with their diffs, newest first: pending ones unless `status` says otherwise. */
  @Get('tool-changes')
  async list(@Req() request: AdminRequest): Promise<{ items: ToolChangeDetail[] }> {
    const query = knownQuery(request, ['agent', 'status', 'limit']) as Record<string, string | undefined>;
    return {
      items: await listToolChanges(this.deps, { agentId: query.agent, status: query.status, limit: query.limit }),
    };
  }

  @Post('agents/:agentId/tool-changes/:version/approve')
  @HttpCode(200)
  approve(
    @Param('agentId') agentId: string,
    @Param('version') version: string,
    @Req() request: AdminRequest,
  ): Promise<ToolChangeDetail> {
    return decideToolChange(this.deps, agentId, version, 'approve', `admin:${request.adminTokenId}`);
  }

  @Post('agents/:agentId/tool-changes/:version/reject')
  @HttpCode(200)
  reject(
    @Param('agentId') agentId: string,
    @Param('version') version: string,
    @Req() request: AdminRequest,
  ): Promise<ToolChangeDetail> {
    return decideToolChange(this.deps, agentId, version, 'reject', `admin:${request.adminTokenId}`);
  }

  @Get('agents/:agentId/tool-change-policy')
  policy(@Param('agentId') agentId: string): Promise<ToolChangePolicyView> {
    return agentToolChangePolicy(this.deps, agentId);
  }

  /** `{"tool_changes": "accept" | "hold" | "reject" | null}` (null: back to TOOL_CHANGES). */
  @Patch('agents/:agentId/tool-change-policy')
  setPolicy(@Param('agentId') agentId: string, @Body() body: unknown): Promise<ToolChangePolicyView> {
    const { tool_changes: value } = objectBody(body, ['tool_changes']) as { tool_changes?: unknown };
    const policy = value === null ? 'default' : typeof value === 'string' ? value : '';
    return agentToolChangePolicy(this.deps, agentId, policy);
  }
}
