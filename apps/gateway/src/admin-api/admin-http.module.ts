import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { BusClient } from '@mcpgw/bus';
import { KYSELY } from '@mcpgw/persistence';
import { AgentsStore } from '../agents/agents.store';
import { PodsStore } from '../agents/pods.store';
import { ApiKeysStore } from '../auth/api-keys.store';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import type { GatewayDb } from '../database/schema';
import { IdempotencyStore } from '../idempotency/idempotency.store';
import { AgentQuotasStore } from '../quotas/agent-quotas.store';
import { WebhookDeliveryLog } from '../webhooks/webhook-delivery-log.store';
import { WebhooksStore } from '../webhooks/webhooks.store';
import { AdminLoginCodesStore } from './admin-login-codes.store';
import { AdminSessionsStore } from './admin-sessions.store';
import { AdminTokenGuard } from './admin-token.guard';
import { AdminTokensStore } from './admin-tokens.store';
import { AgentsController } from './controllers/agents.controller';
import { ApiKeysController } from './controllers/api-keys.controller';
import { CallsController } from './controllers/calls.controller';
import { ChannelsController } from './controllers/channels.controller';
import { QuotasController } from './controllers/quotas.controller';
import { SessionController } from './controllers/session.controller';
import { WebhooksController } from './controllers/webhooks.controller';
import { ADMIN_LIVE, type AdminLive } from './live/admin-live.module';
import { LiveController } from './live/live.controller';
import { LiveStreams } from './live/sse-stream';
import { GrantsController } from './controllers/grants.controller';
import { NatsCredentialsController } from './controllers/nats-credentials.controller';
import { RecordsController } from './controllers/records.controller';
import { ADMIN_OIDC, OidcController } from './controllers/oidc.controller';
import { AdminOidc } from './admin-oidc';
import { adminOidc } from '../config/admin-api.env';
import { GrantKeysService } from '../grants/grant-keys.service';
import { GrantRevocationsStore } from '../grants/grant-revocations.store';
import { PersonalAccessTokensStore } from '../grants/personal-access-tokens.store';
import { NatsCredentialsStore } from '../nats/nats-credentials.store';
import { OperatorRecordsStore } from '../admin/operations/records';
import { ToolChangesStore } from '../tool-pinning/tool-changes.store';
import { AuditExport } from '../audit/audit-export';
import { AuditTrail } from '../audit/audit-trail.service';
import { AuditWriter } from '../audit/audit-writer.service';
import { AuditStore } from '../audit/audit.store';
import { AuditController } from './controllers/audit.controller';
import { ToolChangesController } from './controllers/tool-changes.controller';

/** Every controller of the management API: the OpenAPI test reads its routes from here. */
export const ADMIN_CONTROLLERS = [
  SessionController,
  OidcController,
  AgentsController,
  ApiKeysController,
  WebhooksController,
  QuotasController,
  LiveController,
  CallsController,
  ChannelsController,
  GrantsController,
  NatsCredentialsController,
  RecordsController,
  ToolChangesController,
  AuditController,
];

/**
 * The root module of the management API's own Nest application (on ADMIN_PORT,
 * never on the public port: its controllers are in no module of the public
 * app). It is given the gateway's database handle and environment, so it
 * shares the gateway's pool, and builds the same stores the admin CLI uses;
 * and its bus client, to ask the message service about calls and channels.
 * Every route is behind the admin token guard.
 */
@Module({})
export class AdminHttpModule {
  static forRoot(shared: {
    db: GatewayDb;
    env: GatewayEnv;
    bus: BusClient;
    live?: AdminLive;
    /** The gateway's audit trail (its one writer); without it (the OpenAPI unit test) one of this app's own. */
    trail?: AuditTrail;
  }): DynamicModule {
    return {
      module: AdminHttpModule,
      controllers: ADMIN_CONTROLLERS,
      providers: [
        { provide: KYSELY, useValue: shared.db },
        { provide: GATEWAY_ENV, useValue: shared.env },
        // The gateway's own bus connection: calls and channels are the message service's to tell.
        { provide: BusClient, useValue: shared.bus },
        IdempotencyStore,
        AgentsStore,
        PodsStore,
        ApiKeysStore,
        AgentQuotasStore,
        WebhooksStore,
        WebhookDeliveryLog,
        AdminTokensStore,
        AdminSessionsStore,
        AdminLoginCodesStore,
        GrantKeysService,
        GrantRevocationsStore,
        PersonalAccessTokensStore,
        NatsCredentialsStore,
        OperatorRecordsStore,
        ToolChangesStore,
        AuditStore,
        ...(shared.trail ? [{ provide: AuditTrail, useValue: shared.trail }] : [AuditExport, AuditWriter, AuditTrail]),
        { provide: ADMIN_OIDC, useValue: oidcOf(shared.env) },
        { provide: APP_GUARD, useClass: AdminTokenGuard },
        LiveStreams,
        ...(shared.live ? [{ provide: ADMIN_LIVE, useValue: shared.live }] : []),
      ],
    };
  }
}

/** The OIDC login when configured; a half-made configuration stops the gateway at start. */
function oidcOf(env: GatewayEnv): AdminOidc | null {
  const config = adminOidc(env);
  return config ? new AdminOidc(config) : null;
}
