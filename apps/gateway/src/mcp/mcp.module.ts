import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CallsModule } from '../calls/calls.module';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { SessionsModule } from '../sessions/sessions.module';
import { AgentMcpController } from './agent-surface/agent-mcp.controller';
import { AgentMcpHandler } from './agent-surface/agent-mcp.handler';

/** The MCP edge: protocol, transport and the surfaces over the call pipeline. */
@Module({
  imports: [AuthModule, SessionsModule, CatalogueModule, CallsModule, IdempotencyModule],
  controllers: [AgentMcpController],
  providers: [AgentMcpHandler],
})
export class McpModule {}
