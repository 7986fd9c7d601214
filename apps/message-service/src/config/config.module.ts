import { Global, Module } from '@nestjs/common';
import { MESSAGE_SERVICE_ENV, loadEnv } from './message-service.env';

/** The validated environment, injectable as MESSAGE_SERVICE_ENV. */
@Global()
@Module({
  providers: [{ provide: MESSAGE_SERVICE_ENV, useFactory: () => loadEnv() }],
  exports: [MESSAGE_SERVICE_ENV],
})
export class ConfigModule {}
