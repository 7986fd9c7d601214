import { Global, Module } from '@nestjs/common';
import { AGENT_POD_ENV, loadEnv } from './agent-pod.env';

/** The validated environment, injectable as AGENT_POD_ENV. */
@Global()
@Module({
  providers: [{ provide: AGENT_POD_ENV, useFactory: () => loadEnv() }],
  exports: [AGENT_POD_ENV],
})
export class ConfigModule {}
