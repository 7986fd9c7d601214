import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KyselyModule, databaseHold } from '@mcpgw/persistence';
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
      useFactory: (env: GatewayEnv) => {
        // How long, and how much, database work waits out an outage (DatabaseHold).
        databaseHold.configure({ maxHoldMs: env.DB_OUTAGE_HOLD_MS, maxHeld: env.DB_OUTAGE_MAX_HELD });
        return {
          ...gatewayDatabase(env.DATABASE_URL, env.DATABASE_POOL_SIZE),
          retryAttempts: 3,
          retryDelay: 1_000,
        };
      },
    }),
    KyselyModule.forRoot(),
  ],
})
export class DatabaseModule {}
