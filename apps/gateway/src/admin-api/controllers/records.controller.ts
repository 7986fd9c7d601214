import { Controller, Get, Param, Query } from '@nestjs/common';
import { AgentsStore } from '../../agents/agents.store';
import {
  OperatorRecordsStore,
  agentRecords,
  recordLimit,
  taskStatus,
  type IdempotencyRecordDetail,
  type IdempotencyRecordView,
  type McpSessionView,
  type TaskDetail,
  type TaskView,
} from '../../admin/operations/records';

/**
 * What the gateway keeps of an agent's traffic (the CLI's `session list`,
 * `idempotency list|show`, `task list|show`): read only, newest first.
 */
@Controller('admin/v1')
export class RecordsController {
  constructor(
    private readonly agents: AgentsStore,
    private readonly records: OperatorRecordsStore,
  ) {}

  @Get('agents/:agentId/mcp-sessions')
  async sessions(
    @Param('agentId') agentId: string,
    @Query('limit') limit?: string,
    @Query('open') open?: string,
  ): Promise<{ items: McpSessionView[] }> {
    const items = await agentRecords(this.agents, agentId, () =>
      this.records.sessions(agentId, recordLimit(limit), open === 'true'),
    );
    return { items };
  }

  @Get('agents/:agentId/idempotency-records')
  async idempotencyRecords(
    @Param('agentId') agentId: string,
    @Query('limit') limit?: string,
    @Query('caller') caller?: string,
  ): Promise<{ items: IdempotencyRecordView[] }> {
    const items = await agentRecords(this.agents, agentId, () =>
      this.records.idempotencyRecords(agentId, recordLimit(limit), caller || undefined),
    );
    return { items };
  }

  @Get('agents/:agentId/idempotency-records/:caller/:key')
  idempotencyRecord(
    @Param('agentId') agentId: string,
    @Param('caller') caller: string,
    @Param('key') key: string,
  ): Promise<IdempotencyRecordDetail> {
    return agentRecords(this.agents, agentId, () => this.records.idempotencyRecord(agentId, caller, key));
  }

  @Get('agents/:agentId/tasks')
  async tasks(
    @Param('agentId') agentId: string,
    @Query('limit') limit?: string,
    @Query('status') status?: string,
  ): Promise<{ items: TaskView[] }> {
    const items = await agentRecords(this.agents, agentId, () =>
      this.records.tasks(agentId, recordLimit(limit), taskStatus(status)),
    );
    return { items };
  }

  @Get('tasks/:taskId')
  task(@Param('taskId') taskId: string): Promise<TaskDetail> {
    return this.records.task(taskId);
  }
}
