import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module';
import { AuthModule } from '../auth/auth.module';
import { CatalogueModule } from '../catalogue/catalogue.module';
import { GrantsModule } from '../grants/grants.module';
import { McpModule } from '../mcp/mcp.module';
import { OAuthModule } from '../oauth/oauth.module';
import { QuotasModule } from '../quotas/quotas.module';
import { SessionsModule } from '../sessions/sessions.module';
import { TasksModule } from '../tasks/tasks.module';
import { CallsModule } from '../calls/calls.module';
import { A2aAuthenticator } from './a2a-authenticator.service';
import { A2aCardController } from './a2a-card.controller';
import { A2aCards } from './a2a-cards.service';
import { A2aHttpJsonController } from './a2a-http-json.controller';
import { A2aJsonRpcController } from './a2a-json-rpc.controller';
import { A2aMessages } from './a2a-messages.service';
import { A2aTasks } from './a2a-tasks.service';
import { A2aTaskStreams } from './task-stream.service';
import { A2aPush } from './push/a2a-push.service';
import { PushConfigsStore } from './push/push-configs.store';
import { PushSecretController } from './push/push-secret.controller';
import { WebhooksModule } from '../webhooks/webhooks.module';

/** The A2A 1.0 surface (README.md beside this file): a fourth dialect over the one call path. */
@Module({
  imports: [
    AgentsModule,
    AuthModule,
    GrantsModule,
    OAuthModule,
    CatalogueModule,
    QuotasModule,
    SessionsModule,
    TasksModule,
    CallsModule,
    McpModule,
    WebhooksModule,
  ],
  controllers: [A2aCardController, A2aJsonRpcController, A2aHttpJsonController, PushSecretController],
  providers: [A2aAuthenticator, A2aCards, A2aMessages, A2aTasks, A2aTaskStreams, A2aPush, PushConfigsStore],
})
export class A2aModule {}
