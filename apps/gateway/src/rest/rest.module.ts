import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CallsModule } from '../calls/calls.module';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { GrantsModule } from '../grants/grants.module';
import { McpModule } from '../mcp/mcp.module';
import { OAuthModule } from '../oauth/oauth.module';
import { QuotasModule } from '../quotas/quotas.module';
import { TasksModule } from '../tasks/tasks.module';
import { CallsController } from './calls.controller';
import { InvokeController } from './invoke.controller';
import { OpenApiController } from './openapi/openapi.controller';
import { RestAuthenticator } from './rest-authenticator.service';
import { RestCalls } from './rest-calls.service';
import { RestInvoke } from './rest-invoke.service';
import { ToolsController } from './tools.controller';

/** The REST surface (README.md beside this file): a third dialect over the one call path. */
@Module({
  imports: [AuthModule, GrantsModule, OAuthModule, CatalogueModule, CallsModule, QuotasModule, TasksModule, McpModule],
  controllers: [InvokeController, CallsController, ToolsController, OpenApiController],
  providers: [RestInvoke, RestCalls, RestAuthenticator],
})
export class RestModule {}
