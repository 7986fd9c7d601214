import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KyselyModule, databaseHold } from '@mcpgw/persistence';
import { MESSAGE_SERVICE_ENV, type MessageServiceEnv } from '../config/message-service.env';
import { messagingDatabase } from './database';

/**
 * The message service's PostgreSQL connection pool (schema `messaging`), opened
 * and closed by TypeORM, and the typed query builder over it
 * (`@InjectKysely()`, typed by `MessagingDb`). Also provides `DATABASE_READINESS`.
 */
@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [MESSAGE_SERVICE_ENV],
      useFactory: (env: MessageServiceEnv) => {
        // How long, and how much, database work waits out an outage (DatabaseHold).
        databaseHold.configure({ maxHoldMs: env.DB_OUTAGE_HOLD_MS, maxHeld: env.DB_OUTAGE_MAX_HELD });
        return {
          ...messagingDatabase(env.DATABASE_URL, env.DATABASE_POOL_SIZE),
          retryAttempts: 3,
          retryDelay: 1_000,
        };
      },
    }),
    KyselyModule.forRoot(),
  ],
})
export class DatabaseModule {}
