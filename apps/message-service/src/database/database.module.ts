import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { KyselyModule } from '@mcpgw/persistence';
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
      useFactory: (env: MessageServiceEnv) => ({
        ...messagingDatabase(env.DATABASE_URL, env.DATABASE_POOL_SIZE),
        retryAttempts: 3,
        retryDelay: 1_000,
      }),
    }),
    KyselyModule.forRoot(),
  ],
})
export class DatabaseModule {}
