import { Global, Module } from '@nestjs/common';
import { GATEWAY_ENV, loadEnv } from './gateway.env';

/** The validated environment, injectable as GATEWAY_ENV. */
@Global()
@Module({
  providers: [{ provide: GATEWAY_ENV, useFactory: () => loadEnv() }],
  exports: [GATEWAY_ENV],
})
export class ConfigModule {}
