import { EnvModule } from '@mcpgw/config';
import { Module } from '@nestjs/common';
import {
  BusClient,
  BusModule,
  busDroppedMetric,
  busMessagesMetric,
  busOptionsFromEnv,
  natsConnectionEventsMetric,
  natsCredentialsExpiryMetric,
} from '@mcpgw/bus';
import { DATABASE_READINESS, MIGRATIONS_READINESS, databaseHoldMetrics, sqlMetrics } from '@mcpgw/persistence';
import { HealthModule, MetricsModule, type ReadinessCheck } from '@mcpgw/observability';
import { DrainingModule } from '@mcpgw/runtime';
import { AdminApiModule } from './admin-api/admin-api.module';
import { AgentsModule } from './agents/agents.module';
import { AuditModule } from './audit/audit.module';
import { CacheModule } from './cache/cache.module';
import { GATEWAY_ENV, type GatewayEnv, loadEnv } from './config/gateway.env';
import { DatabaseModule } from './database/database.module';
import { McpModule } from './mcp/mcp.module';
import { RestModule } from './rest/rest.module';
import { A2aModule } from './a2a/a2a.module';

@Module({
  imports: [
    EnvModule.forRoot(GATEWAY_ENV, loadEnv),
    DrainingModule,
    DatabaseModule,
    BusModule.forRootAsync({
      inject: [GATEWAY_ENV],
      useFactory: (env: GatewayEnv) => busOptionsFromEnv(env, `gateway-${env.SERVICE_INSTANCE}`, { role: 'gateway' }),
    }),
    CacheModule,
    AuditModule,
    MetricsModule.forService('gateway', [
      busMessagesMetric,
      busDroppedMetric,
      natsConnectionEventsMetric,
      natsCredentialsExpiryMetric,
      ...sqlMetrics,
      ...databaseHoldMetrics,
    ]),
    HealthModule.forChecks({
      // Its bus handlers (`consumers`) are added by runService (libs/runtime).
      inject: [DATABASE_READINESS, MIGRATIONS_READINESS, BusClient],
      useFactory: (database: ReadinessCheck, migrations: ReadinessCheck, bus: BusClient) => [
        database,
        migrations,
        bus.readiness(),
      ],
    }),
    AgentsModule,
    McpModule,
    RestModule,
    A2aModule,
    AdminApiModule,
  ],
})
export class AppModule {}
