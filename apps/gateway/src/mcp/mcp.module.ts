import { TasksModule } from '../tasks/tasks.module';
import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CallsModule } from '../calls/calls.module';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { SessionsModule } from '../sessions/sessions.module';
import { AgentMcpController } from './agent-surface/agent-mcp.controller';
import { AgentMcpHandler } from './agent-surface/agent-mcp.handler';
import { AgentBatches } from './agent-surface/agent-batches';
import { AgentTools } from './agent-surface/agent-tools';
import { InputRequestIds } from './agent-surface/input-request-ids';
import { ListChangedStreams } from './agent-surface/list-changed.streams';
import { ResourcesAndPrompts } from './agent-surface/resources-and-prompts';
import { InputRequired } from './input-required/input-required.service';
import { ListenStreams } from './subscriptions/listen-streams';
import { RequestStates } from './input-required/request-state';
import { SessionStreams } from './agent-surface/session-streams';
import { GrantMcpController } from './grant-surface/grant-mcp.controller';
import { GrantMcpHandler } from './grant-surface/grant-mcp.handler';
import { GrantsModule } from '../grants/grants.module';
import { CallActivityBatcher } from '../calls/call-activity';
import { CallRunner } from '../calls/call-runner.service';
import { CallMetrics } from '../metrics/call-metrics';
import { QuotasModule } from '../quotas/quotas.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { StreamsModule } from '../streams/streams.module';

/** The MCP edge: protocol, transport and the surfaces over the call pipeline. */
@Module({
  imports: [
    AuthModule,
    GrantsModule,
    SessionsModule,
    CatalogueModule,
    CallsModule,
    IdempotencyModule,
    QuotasModule,
    WebhooksModule,
    StreamsModule,
    TasksModule,
  ],
  controllers: [AgentMcpController, GrantMcpController],
  providers: [
    AgentMcpHandler,
    AgentBatches,
    AgentTools,
    InputRequestIds,
    ResourcesAndPrompts,
    ListChangedStreams,
    SessionStreams,
    GrantMcpHandler,
    CallMetrics,
    CallRunner,
    CallActivityBatcher,
    InputRequired,
    RequestStates,
    ListenStreams,
  ],
  // The management API's playground calls through the same runner (admin-api/live/).
  exports: [CallRunner],
})
export class McpModule {}
