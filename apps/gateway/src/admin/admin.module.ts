import { EnvModule } from '@mcpgw/config';
import { AuditModule } from '../audit/audit.module';
import { Module } from '@nestjs/common';
import { AdminTokensStore } from '../admin-api/admin-tokens.store';
import { AdminLoginCodesStore } from '../admin-api/admin-login-codes.store';
import { OperatorRecordsStore } from './operations/records';
import { AgentsStore } from '../agents/agents.store';
import { PodsStore } from '../agents/pods.store';
import { ApiKeysStore } from '../auth/api-keys.store';
import { GATEWAY_ENV, loadEnv } from '../config/gateway.env';
import { DatabaseModule } from '../database/database.module';
import { GrantKeysService } from '../grants/grant-keys.service';
import { GrantRevocationsStore } from '../grants/grant-revocations.store';
import { PersonalAccessTokensStore } from '../grants/personal-access-tokens.store';
import { AgentQuotasStore } from '../quotas/agent-quotas.store';
import { NatsCredentialsStore } from '../nats/nats-credentials.store';
import { WebhookDeliveryLog } from '../webhooks/webhook-delivery-log.store';
import { WebhooksStore } from '../webhooks/webhooks.store';
import { IdempotencyStore } from '../idempotency/idempotency.store';
import { ToolChangesStore } from '../tool-pinning/tool-changes.store';

/**
 * What the admin CLI needs: the stores and the grant keys, over the gateway's
 * database. No HTTP; the bus only for `call show|list` (calls.command.ts), which
 * connects itself.
 */
@Module({
  imports: [EnvModule.forRoot(GATEWAY_ENV, loadEnv), DatabaseModule, AuditModule],
  providers: [
    AgentsStore,
    PodsStore,
    ApiKeysStore,
    GrantKeysService,
    GrantRevocationsStore,
    PersonalAccessTokensStore,
    AgentQuotasStore,
    NatsCredentialsStore,
    WebhooksStore,
    WebhookDeliveryLog,
    AdminTokensStore,
    AdminLoginCodesStore,
    OperatorRecordsStore,
    IdempotencyStore,
    ToolChangesStore,
  ],
})
export class AdminModule {}
