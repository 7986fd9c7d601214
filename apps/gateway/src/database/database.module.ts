import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KyselyModule } from '@mcpgw/persistence';
import { GATEWAY_ENV, type GatewayEnv } from '../config/gateway.env';
import { gatewayDatabase } from './database';

/**
 * The gateway's PostgreSQL connection pool (schema `gateway`), opened and closed
 * by TypeORM, and the typed query builder over it (`@InjectKysely()`, typed by
 * `GatewayDb`) that the stores use. Also provides `DATABASE_READINESS`.
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [GATEWAY_ENV],
      useFactory: (env: GatewayEnv) => ({
        ...gatewayDatabase(env.DATABASE_URL, env.DATABASE_POOL_SIZE),
        retryAttempts: 3,
        retryDelay: 1_000,
      }),
    }),
    KyselyModule.forRoot(),
  ],
})
export class DatabaseModule {}
