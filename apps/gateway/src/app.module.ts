import { EnvModule } from '@mcpgw/config';
import { Module } from '@nestjs/common';
import { BusModule, NATS_CONNECTION, busMessagesMetric } from '@mcpgw/bus';
import { DATABASE_READINESS, sqlMetrics } from '@mcpgw/persistence';
import { HealthModule, MetricsModule, natsReadiness, type ReadinessCheck } from '@mcpgw/observability';
import type { NatsConnection } from 'nats';
import { AgentsModule } from './agents/agents.module';
import { CacheModule } from './cache/cache.module';
import { GATEWAY_ENV, type GatewayEnv, loadEnv } from './config/gateway.env';
import { DatabaseModule } from './database/database.module';
import { McpModule } from './mcp/mcp.module';

@Module({
  imports: [
    EnvModule.forRoot(GATEWAY_ENV, loadEnv),
    DatabaseModule,
    BusModule.forRootAsync({
      inject: [GATEWAY_ENV],
      useFactory: (env: GatewayEnv) => ({ url: env.NATS_URL, prefix: env.BUS_PREFIX, name: `gateway-${env.SERVICE_INSTANCE}` }),
    }),
    CacheModule,
    MetricsModule.forService('gateway', [busMessagesMetric, ...sqlMetrics]),
    HealthModule.forChecks({
      inject: [DATABASE_READINESS, NATS_CONNECTION],
      useFactory: (database: ReadinessCheck, nc: NatsConnection) => [database, natsReadiness(nc)],
    }),
    AgentsModule,
    McpModule,
  ],
})
export class AppModule {}
